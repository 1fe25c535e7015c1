"""Keep the index (and every other cache that follows HEAD) in step from a thread.

The daemon calls :meth:`IndexFollower.request` after each move of HEAD (it
fits ``Daemon.after_commit``). Requests made while a catch-up runs fold into
one more catch-up, so a burst of commits costs one tree diff, not one per
commit; after a catch-up the thread rests :data:`GAP` seconds before the
next, so that under a stream of writes (a round of commits every few tens
of milliseconds) the caches catch up a few times a second instead of
taking the interpreter from the writers after every round. While the
stream goes on (the follower was asked again before it was ready for
it), it rests :data:`STREAM_GAP` instead: each catch-up then takes more
commits at once, for the same fixed cost (opening the repository and the
index, saving, reloading readers), and a commit is still followed within
about a second and a half. A
catch-up waits for the daemon's socket requests in flight to be answered
(:func:`yield_to`).
:class:`IndexFollower` is the thread every follower shares (index,
embeddings, wiki link table, knowledge catalogue); each brings its own
``catch_up``, which records the commit it reached, diffs since it and
rebuilds when it is gone (see :mod:`minarad.workspace.headtable`).
After a catch-up that wrote, the memory it freed is handed back to the
system, so that a long-running daemon does not keep the peak of a burst.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Callable


def release_freed_memory() -> bool:
    """Return freed heap memory of every thread to the system (glibc ``malloc_trim``).

    A catch-up's text, documents and tantivy buffers are freed when it ends,
    but glibc keeps most of the pages; trimming gives them back. Without
    glibc nothing is done.

    Returns:
        True when memory was given back.
    """
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


#: Seconds a follower rests after a catch-up before the next (a commit in between
#: waits at most this long; a first commit after a quiet spell, not at all).
GAP = 0.3
#: The rest while commits keep coming: the follower was asked again while it
#: caught up or rested (a commit then waits at most this long, plus a catch-up).
STREAM_GAP = 0.8
#: The longest a catch-up waits for the requests in flight to be answered (see
#: :func:`yield_to`).
YIELD_MAX = 0.25

#: What a catch-up waits on first (see :func:`yield_to`); empty: nothing.
_yield: list[Callable[[float], object]] = []


def yield_to(wait_quiet: Callable[[float], object] | None) -> None:
    """Make every follower, before each catch-up, call ``wait_quiet(YIELD_MAX)``.

    The daemon's socket server passes a call that returns once no request is
    in flight (or after the time given): a catch-up started by a client's
    commit then runs after that client was answered, instead of taking the
    interpreter from the request (and from the next one) while it runs.
    None: no more waiting.
    """
    _yield[:] = [] if wait_quiet is None else [wait_quiet]


def wait_for_requests() -> None:
    """Wait at most :data:`YIELD_MAX` seconds for the requests in flight (:func:`yield_to`)."""
    for wait_quiet in list(_yield):
        wait_quiet(YIELD_MAX)


@functools.cache
def _malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


class IndexFollower:
    """A stoppable thread that runs ``index.catch_up()`` when asked.

    Subclasses change the work (:meth:`_catch_up_once`) or open what the
    thread alone uses (:meth:`_open`, :meth:`_close`).

    Args:
        index: an :class:`minarad.index.Index`, or anything with ``catch_up()``
            returning stats with ``busy``, ``files_indexed`` and ``files_removed``.
        busy_retry: seconds to wait before retrying when another process writes.
        on_error: called with the exception when a catch-up fails (logging).
        on_done: called with the :class:`CatchUpStats` of each catch-up.
        name: the thread's name.
    """

    def __init__(self, index, *, busy_retry: float = 0.5,
                 on_error: Callable[[BaseException], None] | None = None,
                 on_done: Callable[[object], None] | None = None,
                 name: str = "index-follower"):
        self.index = index
        self.busy_retry = busy_retry
        self.on_error = on_error
        self.on_done = on_done
        self.name = name
        self._wanted = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> IndexFollower:
        """Start the thread and schedule a first catch-up."""
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        self.request()
        return self

    def request(self, _info=None) -> None:
        """Ask for a catch-up soon (cheap, thread-safe; fits ``after_commit``)."""
        self._wanted.set()

    def stop(self, timeout: float | None = 10.0) -> None:
        """Finish the catch-up under way, then end the thread."""
        self._stop.set()
        self._wanted.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _open(self) -> None:
        """Open what only this thread uses (before the first catch-up)."""

    def _close(self) -> None:
        """Close what :meth:`_open` opened (when the thread ends)."""

    def _run(self) -> None:
        self._open()
        try:
            ran = False
            while not self._stop.is_set():
                streaming = ran and self._wanted.is_set()  # asked while busy or resting
                self._wanted.wait()
                if self._stop.is_set():
                    return
                wait_for_requests()
                self._wanted.clear()
                self._catch_up_once()
                ran = True
                self._stop.wait(STREAM_GAP if streaming else GAP)
        finally:
            self._close()

    def _catch_up_once(self) -> None:
        try:
            stats = self.index.catch_up()
        except Exception as exc:  # keep following; the caller logs
            if self.on_error is not None:
                self.on_error(exc)
            return
        if stats.busy:
            self._stop.wait(self.busy_retry)
            self._wanted.set()
            return
        if stats.files_indexed or stats.files_removed:
            release_freed_memory()
        if self.on_done is not None:
            self.on_done(stats)
