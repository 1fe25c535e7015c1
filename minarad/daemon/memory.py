"""Give big transient buffers back to the system as soon as they are freed.

The daemon allocates big buffers for a moment, over and over: each search
index catch-up builds a tantivy writer whose heap (16 MB) is allocated up
front in a thread of its own, merging small packs reads up to 64 MiB, a
sync reads big objects a chunk at a time. glibc serves a big allocation
with its own ``mmap`` and unmaps it on free, but only below a threshold
that it raises, up to 32 MiB, each time such a buffer is freed. After the
first writer's heap is freed, every later one is carved from one of the
allocator's per-thread arenas instead; there it is kept on free, scattered
over up to eight arenas per core, and the daemon's resident memory ratchets
up with the write rate.

Pinning the threshold (``M_MMAP_THRESHOLD``) turns the raising off: every
buffer of 1 MiB or more is mapped and unmapped on its own, at the cost of
a system call and fresh pages per buffer, which the daemon's rate (tens a
second) does not notice. A threshold set by the user (glibc's
``MALLOC_MMAP_THRESHOLD_`` variable) is left as it is; with another C
library this does nothing.
"""

from __future__ import annotations

import os
import sys

#: Allocations of this many bytes or more are mapped on their own and unmapped on free.
MMAP_THRESHOLD = 1 << 20
#: ``mallopt``'s parameter number for the threshold (glibc's malloc.h).
_M_MMAP_THRESHOLD = -3
#: glibc's variable that sets the threshold itself.
USER_VARIABLE = "MALLOC_MMAP_THRESHOLD_"


def return_big_buffers(threshold: int = MMAP_THRESHOLD) -> bool:
    """Pin glibc's mmap threshold at ``threshold`` bytes for this process.

    Returns:
        True when it was set; False with another C library, or when the user's
        ``MALLOC_MMAP_THRESHOLD_`` already decides.
    """
    if not sys.platform.startswith("linux") or USER_VARIABLE in os.environ:
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(_M_MMAP_THRESHOLD, threshold) == 1
