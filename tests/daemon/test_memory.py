"""The daemon's big transient buffers go back to the system when freed.

A real process builds one real tantivy writer after another (each allocates
its heap, 16 MB, up front, in a thread of its own), as the daemon's index
catch-ups do; its anonymous resident memory is compared with and without
:func:`minarad.daemon.memory.return_big_buffers`, in the same run.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

WRITERS = """
import json, sys, tempfile, threading
import tantivy
from minarad.daemon.memory import return_big_buffers
from minarad.index.engine import CATCH_UP_HEAP
pinned = return_big_buffers() if sys.argv[1] == "pinned" else False

def anon_mb():
    with open("/proc/self/status") as fh:
        return max(int(l.split()[1]) for l in fh if l.startswith("RssAnon")) / 1024

builder = tantivy.SchemaBuilder()
builder.add_text_field("body", stored=True)
folder = tempfile.mkdtemp()
tantivy.Index(builder.build(), path=folder)
peak = 0.0

def catch_up(i):
    index = tantivy.Index.open(folder)
    writer = index.writer(heap_size=CATCH_UP_HEAP, num_threads=1)
    writer.add_document(tantivy.Document(body="a changed note " * 2000 + str(i)))
    writer.commit()
    writer.wait_merging_threads()

for i in range(40):  # each from a thread of its own, as the daemon's followers run
    thread = threading.Thread(target=catch_up, args=(i,))
    thread.start()
    thread.join()
    peak = max(peak, anon_mb())
print(json.dumps({"pinned": pinned, "peak_anon_mb": peak}))
"""


def _peak(mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", WRITERS, mode], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_writer_heaps_are_given_back_instead_of_piling_up():
    default, pinned = _peak("default"), _peak("pinned")
    assert pinned["pinned"] is True
    # the default allocator keeps freed heaps in its arenas; pinned, they are unmapped
    assert pinned["peak_anon_mb"] * 2 < default["peak_anon_mb"], (default, pinned)
