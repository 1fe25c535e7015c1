"""The status verb: the daemon's report and what the workspace itself says.

Running or not, ``minara status`` shows HEAD's last commit (whoever made
it), the tracked files ``.gitignore`` ignores, git's ``??`` lines with
their reasons, the sync remotes and the context files near or over their
budget. Each part is best effort: a damaged repository leaves it empty
and the daemon's own line says what is wrong.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from minarad.errors import MinaraError

if TYPE_CHECKING:
    from minarad.app import Minara
    from minarad.daemon.state import DaemonStatus
    from minarad.store import Store


class WorkspaceStatus:
    """What ``minara status`` reports (a plain class: a fresh status makes no dataclass).

    Attributes:
        daemon: what the running daemon last reported (``running`` False without one).
        head: HEAD's commit (id, subject, author, time), None before the first.
        notes: ``tracked_ignored``, ``untracked``, ``sync`` (when the repository
            is intact) and ``budgets``.
    """

    __slots__ = ("daemon", "head", "notes")

    def __init__(self, daemon: DaemonStatus, head: dict[str, Any] | None,
                 notes: dict[str, Any]):
        self.daemon, self.head, self.notes = daemon, head, notes

    def to_dict(self) -> dict[str, Any]:
        """The daemon's fields, ``head_commit`` and the notes, in one JSON-ready mapping."""
        return {**self.daemon.as_dict(), "head_commit": self.head, **self.notes}


def status(app: Minara) -> WorkspaceStatus:
    """See :class:`WorkspaceStatus`."""
    from minarad.daemon.state import read_status

    daemon = read_status(app.settings.workspace)
    notes = {**workspace_notes(app), "budgets": budget_notes(app),
             "knowledge": knowledge_notes(app)}
    return WorkspaceStatus(daemon=daemon, head=head_commit(app), notes=notes)


def workspace_notes(app: Minara) -> dict[str, Any]:
    """Tracked files that are ignored, and git's ``??`` lines, each with its reason."""
    from minarad.store.ignoreguard import tracked_but_ignored
    from minarad.store.untracked import untracked_explained

    store = app.existing_store()
    if store is None:
        return {"tracked_ignored": [], "untracked": []}
    try:
        with store.same_ignore_rules():  # each ignore file read once for both lists
            return {"tracked_ignored": [n.to_dict() for n in tracked_but_ignored(store)],
                    "untracked": [n.to_dict() for n in untracked_explained(store)],
                    "sync": sync_notes(store)}
    except (KeyError, OSError, MinaraError):
        # A damaged repository (a missing tree): the daemon's own status
        # line says what is wrong; the notes need an intact HEAD.
        return {"tracked_ignored": [], "untracked": []}


def sync_notes(store: Store) -> dict[str, Any]:
    """Remotes (ahead/behind, last sync, last error) and conflict copies left by sync."""
    from minarad.sync import status as sync_status

    notes: dict[str, Any] = sync_status(store)
    return notes


def head_commit(app: Minara) -> dict[str, Any] | None:
    """HEAD's commit (whoever made it): id, subject, author and time; None if there is none.

    Kept beside the repository by commit id (:data:`HEAD_SAVED`; a commit
    never changes): a fresh status reads no object, and loads no git
    library, while HEAD stays where it was.
    """
    store = app.existing_store()
    if store is None:
        return None
    try:
        head = store.head()
        if head is None:
            return None
        saved = _saved_head(store, head)
        if saved is not None:
            return saved
        found = _read_head_commit(store, head)
    except (KeyError, OSError, ValueError, MinaraError):
        return None  # a damaged repository: the daemon's status line says what is wrong
    from minarad.cachesave import save_cache

    save_cache(lambda: _save_head(store, found))
    return found


#: HEAD's commit as :func:`head_commit` last read it, in the repository's state folder.
HEAD_SAVED = "head-commit.json"


def _read_head_commit(store: Store, head: str) -> dict[str, Any]:
    from minarad.git.commits import author_name
    from minarad.git.loose import loose_commit
    from minarad.isotime import iso_time

    commit = loose_commit(store.git_dir, head) or store.repo[head.encode()]
    return {"commit": head, "subject": commit.message.decode("utf-8", "replace")
            .split("\n", 1)[0], "author": author_name(commit.author),
            "at": iso_time(commit.author_time, commit.author_timezone)}


def _saved_head(store: Store, head: str) -> dict[str, Any] | None:
    """The saved description of commit ``head``, if the saved one is of that commit."""
    import json

    try:
        with open(store.state_dir / HEAD_SAVED, encoding="utf-8") as fh:
            saved = json.load(fh)
    except (OSError, ValueError):
        return None  # missing or torn: read again
    if not isinstance(saved, dict) or saved.get("commit") != head:
        return None
    if not all(isinstance(saved.get(k), str) for k in ("subject", "author", "at")):
        return None
    return {k: saved[k] for k in ("commit", "subject", "author", "at")}


def _save_head(store: Store, found: dict[str, Any]) -> None:
    """Save ``found`` for the next process (a cache: not fsynced, replaced whole)."""
    from minarad.cachesave import save_json

    save_json(store.state_dir / HEAD_SAVED, found)


def knowledge_notes(app: Minara) -> list[dict[str, Any]]:
    """Knowledge files that cannot be read (grants, records): path, line, message, effect.

    An unreadable ``grants.json`` withholds every record from search and
    context; an unreadable record is skipped. Empty without a ``knowledge/``.
    Kept beside the repository (:data:`KNOWLEDGE_SAVED`) by HEAD's
    ``knowledge/`` tree (the catalogue's record problems follow it) and
    ``grants.json``'s identity: a fresh status opens no catalogue while
    neither moved, also after a commit that touched no record.
    """
    if not (app.root / "knowledge").is_dir() or not app.has_repository():
        return []
    from minarad.cachesave import load_keyed, save_cache, save_keyed

    store = app.existing_store()
    key = None if store is None else _knowledge_key(app, store)
    if store is not None and key is not None:
        saved = load_keyed(store.state_dir / KNOWLEDGE_SAVED, key)
        if isinstance(saved, list) and all(isinstance(n, dict) for n in saved):
            return saved
    try:
        knowledge = app.knowledge
        notes: list[dict[str, Any]] = []
        grants = knowledge.grants_problem()
        if grants is not None:
            notes.append({**grants.details, "message": grants.message,
                          "effect": "knowledge records are withheld from search and context"})
        notes += [{**p.to_dict(), "effect": "skipped everywhere"} for p in knowledge.problems()]
    except (OSError, MinaraError):
        return []
    if store is not None and key is not None and _settled(key) \
            and key == _knowledge_key(app, store):
        save_cache(lambda: save_keyed(store.state_dir / KNOWLEDGE_SAVED, key, notes))
    return notes


#: :func:`knowledge_notes`' last answer, in the repository's state folder.
KNOWLEDGE_SAVED = "knowledge-notes.json"
#: A file changed this recently (ns) is not trusted by its times: a change in the
#: same clock tick may leave them as they were (as git does with its index).
_RACY_NS = 2_000_000_000


def _settled(key: list[Any]) -> bool:
    """True when no file stat in ``key`` changed within :data:`_RACY_NS` of now."""
    import time

    settled = time.time_ns() - _RACY_NS
    return all(part[3] < settled and part[4] < settled for part in key
               if isinstance(part, list))


def _knowledge_key(app: Minara, store: Store) -> list[Any] | None:
    """What the knowledge notes follow: HEAD's ``knowledge/`` tree (HEAD itself when its
    objects are not loose), and ``knowledge/`` and ``grants.json`` as they are on disk
    (inode, type, size and times); None when HEAD cannot be read."""
    from minarad.git.loose import loose_commit, loose_tree_entry
    from minarad.knowledge.grants import GRANTS_PATH

    try:
        head = store.head()
        commit = None if head is None else loose_commit(store.git_dir, head)
        known, tree = (False, None) if commit is None else loose_tree_entry(
            store.git_dir, commit.tree, b"knowledge")
    except (OSError, ValueError, MinaraError):
        return None
    # a commit that changed no record (a CLI write's objects are loose) keeps the key
    key: list[Any] = [f"tree {tree}" if known else head, app.settings.max_file_bytes]
    for rel in ("knowledge", GRANTS_PATH):
        try:
            st = os.lstat(app.root / rel)
        except OSError:
            key.append(None)
            continue
        key.append([st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
    return key


def budget_notes(app: Minara) -> list[dict[str, Any]]:
    """Context files near or over their budget (empty before the workspace is set up).

    Kept beside the repository by what they were measured from
    (:mod:`minarad.budgetcache`): a fresh status reads and redacts no file
    while none of them changed.
    """
    if not app.has_repository():
        return []
    from minarad.budgetcache import budget_notes as saved_notes

    store = app.existing_store()
    if store is None:
        return _measured_budget_notes(app)
    s = app.settings
    return saved_notes(os.fspath(app.root), os.fspath(store.state_dir),
                       [s.context_max_file_chars, s.context_max_total_chars, s.max_file_bytes],
                       _context_sources, lambda: _measured_budget_notes(app))


def _context_sources() -> list[str]:
    from minarad.context import context_sources

    return context_sources()


def _measured_budget_notes(app: Minara) -> list[dict[str, Any]]:
    try:
        report = app.budget_report()
    except (OSError, MinaraError):
        return []
    return [line.as_dict() for line in report.warnings()]
