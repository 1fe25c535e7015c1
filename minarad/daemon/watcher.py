"""Turn watchdog events into workspace-relative paths worth committing.

Events under ``.git/``, open/close-without-write noise and editor
temporaries are dropped in the observer thread, before anything is queued.
A move yields both its source and its destination (an atomic save is then
an edit of the destination; a rename within the tree is a delete plus an
add that settle together). Events that cannot be mapped to files (a folder
gone or moved out of the tree) and lost events ask for a whole-tree
reconcile instead.
"""

from __future__ import annotations

import errno
import logging
import os
import queue
from collections.abc import Callable

from loguru import logger
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)

#: The file events a write makes (content, name or existence). Opens and closes
#: without a write are left out: a look at a file must never wake its watcher.
FILE_WRITE_EVENTS = [FileCreatedEvent, FileModifiedEvent, FileMovedEvent, FileDeletedEvent,
                     FileClosedEvent]
#: The events we subscribe to. An attribute change counts: ``chmod +x`` alone is a
#: new version (git records the mode).
EVENT_FILTER = [*FILE_WRITE_EVENTS, FileAttribEvent, DirCreatedEvent, DirDeletedEvent,
                DirMovedEvent]
#: Seconds the inotify observer's dispatcher blocks on its queue before looking
#: at its stop flag again (a stop wakes it at once): no idle wake-ups.
IDLE_BLOCK_SECONDS = 3600.0
#: A key that stands for "compare the whole tree with HEAD".
WHOLE_TREE = "."
INOTIFY_LIMIT_HINT = (
    "inotify could not watch the workspace ({error}); falling back to polling, which "
    "costs CPU. Raise the limit: sudo sysctl fs.inotify.max_user_watches=524288 "
    "(and fs.inotify.max_user_instances), persisted in /etc/sysctl.d/")


class WorkspaceEventHandler(FileSystemEventHandler):
    """Maps watchdog events to relative paths and hands them to ``sink``.

    Args:
        root: the workspace directory (absolute).
        ignore: the shared :class:`minarad.workspace.ignore.IgnoreFilter`.
        sink: called with a relative path, or :data:`WHOLE_TREE`.
    """

    def __init__(self, root: str, ignore: Callable, sink: Callable[[str], None]):
        self.root = os.path.abspath(root).rstrip(os.sep)
        self.prefix = self.root + os.sep
        self.ignore = ignore
        self.sink = sink

    def relative(self, path) -> str | None:
        """Return the workspace-relative form of an absolute event path, or None."""
        path = os.fsdecode(path)
        if not path.startswith(self.prefix):
            return None
        rel = path[len(self.prefix):]
        if rel == ".git" or rel.startswith(".git/"):
            return None
        return rel

    def _offer(self, path, is_dir: bool = False) -> None:
        rel = self.relative(path)
        if rel is None or self.ignore(rel, is_dir=is_dir):
            return
        if rel == ".gitignore" or rel.endswith("/.gitignore"):
            self.sink(WHOLE_TREE)
        self.sink(rel)

    def dispatch(self, event: FileSystemEvent) -> None:
        """Route one event (called in the observer thread)."""
        if event.is_directory:
            self._on_dir(event)
            return
        self._offer(event.src_path)
        if event.event_type == "moved":
            self._offer(event.dest_path)

    def _on_dir(self, event: FileSystemEvent) -> None:
        # Created and moved folders come with events for their files
        # (watchdog walks them); a folder deleted or moved out of the tree
        # does not, so the tree is compared with HEAD.
        if event.event_type == "deleted":
            rel = self.relative(event.src_path)
            if rel is not None and not self.ignore(rel, is_dir=True):
                self.sink(WHOLE_TREE)


class LostEventsLog(logging.Handler):
    """Catches watchdog's own warnings, above all that the inotify queue overflowed.

    Each kind of warning is logged once, on one line; its repeats (an
    overflow names itself twice, a polling error recurs every interval) go
    to the debug log. Every overflow still asks for a whole-tree reconcile.

    Args:
        on_lost: called with a reason when events may have been lost.
    """

    def __init__(self, on_lost: Callable[[str], None]):
        super().__init__(logging.WARNING)
        self.on_lost = on_lost
        self._told: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        """Log watchdog's warning once per kind; forward overflow and watch-rebuild failures."""
        text = record.getMessage()
        lost = "overflow" in text.lower() or "unable to rebuild" in text.lower()
        kind = "overflow" if "overflow" in text.lower() else str(record.msg)
        if "inactive" in text or kind in self._told:
            logger.debug("watchdog: {}", text)
        elif lost:
            logger.warning("watchdog: {}; comparing the tree with HEAD (told once)", text)
        else:
            logger.warning("watchdog: {} (told once)", text)
        self._told.add(kind)
        if lost:
            self.on_lost(text)


def install_lost_events_log(on_lost: Callable[[str], None]) -> LostEventsLog:
    """Attach a :class:`LostEventsLog` to watchdog's loggers and return it."""
    handler = LostEventsLog(on_lost)
    logging.getLogger("watchdog").addHandler(handler)
    return handler


def inotify_observer():
    """An inotify observer whose dispatcher sleeps until an event or a stop."""
    from watchdog.observers.inotify import InotifyObserver

    return InotifyObserver(timeout=IDLE_BLOCK_SECONDS)


def polling_observer(interval: float = 1.0):
    """A polling observer looking every ``interval`` seconds (where inotify cannot start)."""
    from watchdog.observers.polling import PollingObserver

    return PollingObserver(timeout=interval)


def _workspace_inotify_observer():
    try:
        return _git_pruned_inotify_observer()
    except (ImportError, AttributeError, TypeError):  # other watchdog internals
        logger.debug("this watchdog cannot leave .git unwatched; watching all of it")
        return inotify_observer()


def _inside_git(root: bytes, path: bytes) -> bool:
    """True when ``path`` is a ``.git`` folder below ``root``, or inside one."""
    rel = path[len(root):] if path.startswith(root) else path
    return b".git" in rel.split(b"/")


def _git_pruned_inotify_observer():
    """An inotify observer that puts no watch on or inside any ``.git`` folder.

    A repository's object folders would otherwise take most of the watches
    (and their events are dropped anyway). Built on watchdog's inotify
    watch group: only the step that adds one watch is narrowed.
    """
    from watchdog.observers.inotify import InotifyEmitter, InotifyObserver, InotifyWatchGroup

    class GitPrunedWatchGroup(InotifyWatchGroup):
        def _add_all_callbacks(self, path: bytes) -> None:
            if not _inside_git(self.path, path):
                super()._add_all_callbacks(path)

        def _add_callback(self, path: bytes) -> None:
            if not _inside_git(self.path, path):
                super()._add_callback(path)

    class GitPrunedEmitter(InotifyEmitter):
        def on_thread_start(self) -> None:
            self._inotify = GitPrunedWatchGroup(
                self._inotify_fd, os.fsencode(self.watch.path),
                is_recursive=self.watch.is_recursive,
                event_mask=self.get_event_mask_from_filter(),
                follow_symlink=self.watch.follow_symlink)

    observer = InotifyObserver(timeout=IDLE_BLOCK_SECONDS)
    observer._emitter_class = GitPrunedEmitter
    return observer


def start_observer(root: str, handler: FileSystemEventHandler, *, polling: bool = False,
                   factories: tuple | None = None):
    """Start watching ``root`` recursively; return ``(observer, kind)``.

    inotify is tried first; when it cannot start (watch or instance limit)
    a polling observer takes over and a warning names the fix.

    Args:
        root: the workspace directory.
        handler: the event handler.
        polling: skip inotify.
        factories: ``(kind, make_observer)`` pairs to try in order (tests).
    """
    if factories is None:
        factories = (("polling", polling_observer),) if polling else (
            ("inotify", _workspace_inotify_observer), ("polling", polling_observer))
    for index, (kind, make) in enumerate(factories):
        try:
            return _schedule_and_start(make(), root, handler), kind
        except OSError as exc:
            if index == len(factories) - 1:
                raise
            logger.warning(INOTIFY_LIMIT_HINT, error=_describe(exc))
    raise ValueError("no observer to start")


def _schedule_and_start(observer, root: str, handler):
    try:
        observer.schedule(handler, root, recursive=True, event_filter=EVENT_FILTER)
        observer.start()
    except BaseException:
        _stop_quietly(observer)
        raise
    return observer


def _describe(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "fs.inotify.max_user_watches reached"
    if exc.errno == errno.EMFILE:
        return "fs.inotify.max_user_instances reached"
    return str(exc)


def _stop_quietly(observer) -> None:
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(timeout=5)
    except Exception:  # a half-started observer may not stop cleanly
        pass


def stop_observer(observer, timeout: float = 5.0) -> None:
    """Stop an observer and wait for its threads."""
    observer.stop()
    observer.join(timeout=timeout)


def drain_observer(observer, handler: FileSystemEventHandler, timeout: float = 5.0) -> int:
    """Stop an observer, then hand ``handler`` the events it queued but never dispatched.

    Returns:
        How many events were handed over.
    """
    stop_observer(observer, timeout)
    drained = 0
    while True:
        try:
            entry = observer.event_queue.get_nowait()
        except queue.Empty:
            return drained
        if isinstance(entry, tuple):  # (event, watch); the stop sentinel is not
            handler.dispatch(entry[0])
            drained += 1


def observer_healthy(observer) -> bool:
    """True while the observer and every one of its emitters are alive."""
    return observer.is_alive() and all(e.is_alive() for e in observer.emitters)
