"""The daemon's one HEAD follower: every move of the branch, whoever made it.

The CLI, the gateway, MCP, jobs, sync and a hand-made ``git commit`` or
``git reset`` all end by writing ``HEAD``, a branch file under
``refs/heads/`` (through a ``.lock`` file renamed into place) or
``packed-refs``. An inotify watch on those (watchdog) wakes a thread that
reads HEAD; when it moved, every follower is called once with a
:class:`HeadMove`. The daemon's own commits go through :meth:`announce`
with their ``CommitInfo`` first; a commit already dispatched is never
dispatched twice, whichever of the two paths sees it first.

Nothing here polls: the thread sleeps until inotify (or :meth:`poke`)
wakes it. Only where inotify cannot start (network file systems, the
``--polling`` daemon) does a polling observer look at the refs each second.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable

from loguru import logger
from watchdog.events import FileSystemEvent, FileSystemEventHandler

from minarad.daemon.watcher import FILE_WRITE_EVENTS, inotify_observer, polling_observer
from minarad.git import refs

#: The events that can move HEAD. Reading HEAD opens it: opens and closes
#: without a write must never reach the handler, or each look wakes the next.
WRITE_EVENTS = FILE_WRITE_EVENTS
#: Event types a write can produce.
WRITE_TYPES = ("created", "modified", "moved", "deleted", "closed")


@dataclasses.dataclass(frozen=True)
class HeadMove:
    """HEAD moved, by anyone: what the followers receive for a commit not the daemon's.

    Attributes:
        commit: the commit HEAD points to now (None on an unborn branch).
        previous: the commit last dispatched (None at start).
        source: who moved it, when known (the daemon's ``CommitInfo`` knows).
        paths: the changed paths, when known; None means "diff to find out".
    """

    commit: str | None
    previous: str | None
    source: str | None = None
    paths: tuple[str, ...] | None = None


class RefEventHandler(FileSystemEventHandler):
    """Calls ``poke`` for events on HEAD, ``packed-refs`` and branch files.

    Args:
        git_dir: the repository's git folder (``HEAD`` lives here).
        common_dir: where ``refs/`` and ``packed-refs`` live (the same outside worktrees).
        poke: called (in the observer thread) when HEAD may have moved.
    """

    def __init__(self, git_dir: str, common_dir: str, poke: Callable[[], None]):
        self.tops = {os.path.join(git_dir, "HEAD"), os.path.join(common_dir, "packed-refs")}
        self.heads = os.path.join(common_dir, "refs", "heads") + os.sep
        self.poke = poke

    def relevant(self, path: str) -> bool:
        """True for HEAD, ``packed-refs`` and branch files (never their ``.lock``)."""
        return not path.endswith(".lock") and (path in self.tops or path.startswith(self.heads))

    def dispatch(self, event: FileSystemEvent) -> None:
        """Poke for a relevant path (the destination of a rename counts)."""
        if event.event_type not in WRITE_TYPES:
            return
        paths = [os.fsdecode(event.src_path)]
        if event.event_type == "moved":
            paths.append(os.fsdecode(event.dest_path))
        if any(self.relevant(p) for p in paths):
            self.poke()


class HeadFollower:
    """Dispatches each move of HEAD to ``dispatch`` exactly once, on a thread of its own.

    Args:
        git_dir: the repository's git folder.
        dispatch: called with a ``CommitInfo`` (the daemon's commits) or a
            :class:`HeadMove` (every other move), serially.
        polling: watch with a polling observer (no inotify).
    """

    def __init__(self, git_dir: str, dispatch: Callable[[object], None], *,
                 polling: bool = False):
        self.git_dir = git_dir
        self.common_dir = refs.common_dir(git_dir)
        self.dispatch = dispatch
        self.polling = polling
        self.last: str | None = None
        self.started = False
        self._guard = threading.Lock()
        self._own = threading.RLock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="head-follower", daemon=True)
        self._observer = None

    # -- lifecycle -----------------------------------------------------------

    def start(self) -> HeadFollower:
        """Watch the refs and dispatch HEAD as it is now (followers catch up at start)."""
        self._observer = self._watch()
        self.started = True
        self._thread.start()
        self.poke()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching and end the thread."""
        self._stop.set()
        self._wake.set()
        if self._observer is not None:
            try:
                self._observer.stop()
                self._observer.join(timeout)
            except RuntimeError:  # never started
                pass
            self._observer = None
        if self._thread.is_alive():
            self._thread.join(timeout)

    # -- requests ------------------------------------------------------------

    def poke(self) -> None:
        """Look at HEAD soon (thread-safe; cheap)."""
        self._wake.set()

    def own_commit(self) -> threading.RLock:
        """Held by the daemon around a commit of its own and its :meth:`announce`.

        A move seen meanwhile waits for it, so the daemon's ``CommitInfo``
        (which names the paths and the source) is what the followers get.
        """
        return self._own

    def announce(self, info) -> None:
        """The daemon committed ``info``: dispatch it now unless already dispatched."""
        commit = getattr(info, "commit", None)
        with self._guard:
            if commit is not None and commit == self.last:
                return
            if commit is not None:
                self.last = commit
            self._call(info)

    def check(self) -> bool:
        """Read HEAD; dispatch a :class:`HeadMove` when it differs; True when it did."""
        with self._own:
            return self._check()

    def _check(self) -> bool:
        try:
            head = refs.read_head(self.git_dir)
        except (OSError, UnicodeDecodeError) as exc:
            logger.debug("HEAD not readable now: {}", exc)
            return False
        with self._guard:
            if head == self.last and self.last is not None:
                return False
            previous, self.last = self.last, head
            self._call(HeadMove(commit=head, previous=previous))
        return True

    # -- internals -------------------------------------------------------------

    def _call(self, info) -> None:
        try:
            self.dispatch(info)
        except Exception:  # noqa: BLE001 - one follower's bug must not stop following
            logger.exception("after-commit dispatch failed")

    def _run(self) -> None:
        while True:
            self._wake.wait()
            if self._stop.is_set():
                return
            self._wake.clear()
            self.check()

    def _watch(self):
        """Start an observer on the git folder (flat) and ``refs/heads`` (deep)."""
        handler = RefEventHandler(self.git_dir, self.common_dir, self.poke)
        heads = os.path.join(self.common_dir, "refs", "heads")
        os.makedirs(heads, exist_ok=True)
        folders = sorted({self.git_dir, self.common_dir})
        for make in _observer_factories(self.polling):
            observer = make()
            try:
                for folder in folders:
                    observer.schedule(handler, folder, recursive=False,
                                      event_filter=WRITE_EVENTS)
                observer.schedule(handler, heads, recursive=True, event_filter=WRITE_EVENTS)
                observer.start()
            except OSError as exc:
                logger.warning("cannot watch the branch with inotify ({}); polling it", exc)
                continue
            return observer
        return None


def _observer_factories(polling: bool) -> list[Callable]:
    return [polling_observer] if polling else [inotify_observer, polling_observer]
