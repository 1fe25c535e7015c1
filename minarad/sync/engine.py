"""One sync with a remote: fetch, fast-forward or merge, push; retry a lost push race.

The network (fetch, push) runs outside the workspace lock, so commits never
wait for it; only bringing the remote's commit in holds the lock, and it
goes through the store's transaction: a fast-forward moves HEAD to the
remote's commit, a merge is one commit with two parents. Either changes the
files on disk, the ``.git/index`` and the history cache together, all or
nothing; the search index catches up from the new HEAD as after any commit.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, cast

from minarad.crashpoints import crash_point
from minarad.errors import Busy, InvalidInput
from minarad.store.held import HeldEntry
from minarad.store.models import Record
from minarad.sync.rules import CLASHED, FileMerge, conflict_name, merge_file

if TYPE_CHECKING:
    from minarad.git.diff import FileChange
    from minarad.git.types import Repo
    from minarad.store.store import Store

#: How many times a push that lost a race fetches and merges again.
PUSH_RETRIES = 4
_HEAD_RETRIES = 10


@dataclasses.dataclass(frozen=True)
class SyncResult(Record):
    """What one sync did.

    ``action`` is ``up-to-date``, ``pushed`` (only ours was new),
    ``fast-forward``, ``merge``; ``pushed`` says whether the remote moved.
    ``held``: the remote's entries this sync kept in the tree without
    checking them out; ``left_out``: those only the remote's commit holds
    (each a :class:`minarad.store.held.HeldEntry`, with the reason and fix).
    """

    remote: str
    action: str
    head: str | None
    pushed: bool
    merged: tuple = ()
    conflicts: tuple = ()
    retries: int = 0
    clashed: tuple = ()
    held: tuple = ()
    left_out: tuple = ()

    def to_dict(self) -> dict:
        """As :meth:`Record.to_dict`, each held entry's name shown as it can be printed."""
        return {**dataclasses.asdict(self), "held": [e.to_dict() for e in self.held],
                "left_out": [e.to_dict() for e in self.left_out]}


@dataclasses.dataclass
class Plan:
    """What bringing the remote's commit in does: files written or deleted on disk, entries
    carried in the tree only (held), and entries the merge cannot hold (left out)."""

    files: dict[str, FileMerge] = dataclasses.field(default_factory=dict)
    carried: dict[str, tuple[int, str] | None] = dataclasses.field(default_factory=dict)
    held: list[HeldEntry] = dataclasses.field(default_factory=list)
    left_out: list[HeldEntry] = dataclasses.field(default_factory=list)


def current_branch(store: Store) -> str:
    """The branch HEAD names (``main``).

    Raises:
        Busy: HEAD is detached.
    """
    from minarad.git.refs import head_branch

    ref = head_branch(str(store.git_dir))
    if not ref or not ref.startswith("refs/heads/"):
        raise Busy("HEAD is detached: check out a branch before syncing", code="detached_head")
    return ref[len("refs/heads/"):]


def sync(store: Store, name: str, *, machine: str, author: str = "minara-sync", creds=None,
         retries: int = PUSH_RETRIES, commit_edits: bool = True, limits=None) -> SyncResult:
    """Sync the workspace with remote ``name``: fetch, integrate, push.

    A push that would publish a credential is refused after the fetch and
    merge (:mod:`minarad.secrets.push`).

    With ``commit_edits``, edits on disk are committed first (a scan of the
    whole tree), so they travel too; a running daemon commits them itself,
    so it and the CLI beside it skip the scan. ``limits``
    (:class:`minarad.git.fetchguard.FetchLimits`) bound what a fetch accepts.

    Raises:
        NotFound: no such remote.
        RemoteUnreachable: the remote could not be reached.
        Busy: the remote kept moving through every retry (``sync_race``).
    """
    from minarad.git import remotes

    url = remotes.remote_url(store.repo, name)
    branch = current_branch(store)
    if commit_edits:
        store.commit_disk()
    from minarad.git.trees import reading_trees

    # one sync reads the same trees many times (merge, commit, push check): read once
    with sync_lock(store), reading_trees(store.repo.object_store):
        return _sync_locked(store, name, url, branch, machine, author, creds, retries, limits)


def sync_lock(store: Store):
    """The lock one sync holds on a workspace (``.git/minara/sync.lock``).

    The daemon's sync and a ``minara sync`` beside it take turns: two fetches
    into one repository would write the same pack and race on its index, and
    each would move the remote-tracking branch. Commits do not take it, so
    they never wait on the network; a killed holder leaves no stale lock.
    """
    from minarad.store.lock import FileLock

    return FileLock(store.state_dir / "sync.lock")


def _sync_locked(store: Store, name, url, branch, machine, author, creds, retries,
                 limits=None) -> SyncResult:
    from minarad.git import remotes
    from minarad.secrets.push import check_push

    for attempt in range(retries + 1):
        theirs = remotes.fetch(store.repo, name, url, branch, creds, limits)
        crash_point("sync-after-fetch")
        action, merged, conflicts, clashed, plan = integrate(store, name, theirs,
                                                             machine=machine, author=author)
        crash_point("sync-after-merge")
        head = store.head()
        held, left_out = tuple(plan.held), tuple(plan.left_out)
        if head is None or head == theirs:
            return SyncResult(name, action, head, False, merged, conflicts, attempt, clashed,
                              held, left_out)
        check_push(store.root, name, head, theirs)
        try:
            remotes.push(store.repo, url, branch, head, theirs, creds)
        except remotes.PushRejected:
            time.sleep(0.05 * attempt)
            continue
        crash_point("sync-after-push")
        remotes.set_tracking(store.repo, name, branch, head)
        return SyncResult(name, "pushed" if action == "up-to-date" else action, head, True,
                          merged, conflicts, attempt, clashed, held, left_out)
    raise Busy(f"remote {name} kept moving: {retries + 1} pushes lost the race; try again",
               code="sync_race", remote=name)


def integrate(store: Store, name: str, theirs: str | None, *, machine: str, author: str
              ) -> tuple[str, tuple, tuple, tuple, Plan]:
    """Bring ``theirs`` into HEAD; return ``(action, merged paths, conflict copies, paths
    whose lines clashed, the plan applied)``."""
    for _ in range(_HEAD_RETRIES):
        try:
            # one reading of the ignore rules for every path the plan and merge check
            with store.lock(), store.same_ignore_rules():
                return _integrate_once(store, name, theirs, machine, author)
        except Busy as exc:
            if exc.code != "head_moved":
                raise
    raise Busy("edits kept arriving while merging; try again", code="head_moved")


def _integrate_once(store: Store, name, theirs, machine, author):
    from minarad.git import ancestry

    repo, head = store.repo, store.head()
    if theirs is None or theirs == head or (head and ancestry.is_ancestor(repo, theirs, head)):
        return "up-to-date", (), (), (), Plan()
    if head is None or ancestry.is_ancestor(repo, head, theirs):
        whole = plan_fast_forward(store, head, theirs)
        try:
            _apply(store, name, whole, author, head, fast_forward=theirs)
            return "fast-forward", tuple(sorted(whole.files)), (), (), whole
        except InvalidInput as exc:  # file modes differ: a merge commit says the same
            if exc.code != "fast_forward_mismatch":
                raise
    # head is None only before the first commit, whose sync fast-forwards (or fails above)
    head = cast(str, head)
    whole = plan_merge(store, ancestry.merge_base(repo, head, theirs), head, theirs, machine)
    _apply(store, name, whole, author, head, parents=(theirs,))
    plans = whole.files
    conflicts = tuple(p for plan in plans.values() if plan.how == "conflict copy"
                      for p in plan.writes if p not in plans)
    clashed = tuple(sorted(p for p, plan in plans.items() if plan.how == CLASHED))
    return ("merge", tuple(sorted(p for p, plan in plans.items() if plan.writes)), conflicts,
            clashed, whole)


def _tree(repo, commit: str | None):
    from minarad.git.objects import commit_tree

    return commit_tree(repo, commit) if commit else None


def _blob_at(repo, tree, path: str) -> bytes | None:
    from minarad.git.objects import read_blob
    from minarad.git.trees import lookup_blob

    found = lookup_blob(repo.object_store, tree, path.encode("utf-8", "surrogateescape"))
    if found is None or found[0] == 0o160000:  # a submodule's commit is not here
        return None
    return read_blob(repo.object_store, found[1].decode())


def _remote_changes(repo: Repo, old_tree: bytes | None, new_tree: bytes | None
                    ) -> list[FileChange]:
    """The files that differ between two trees, names kept byte for byte.

    A name that is not UTF-8 comes as its lone surrogates (``surrogateescape``):
    such an entry is held (:func:`minarad.sync.passthrough.why_held`), never
    renamed on the way in, which would be a change nobody made.
    """
    from minarad.git.diff import diff_trees

    return diff_trees(repo.object_store, old_tree, new_tree, names="surrogateescape")


def plan_fast_forward(store: Store, head: str | None, theirs: str) -> Plan:
    """Every entry that differs from HEAD to ``theirs``, as ``theirs`` has it."""
    repo = store.repo
    our_tree, plan = _tree(repo, head), Plan()
    held_here = held_paths(store)
    for change in _remote_changes(repo, our_tree, _tree(repo, theirs)):
        if change.blob is None:
            if _held_here(repo, our_tree, change.path, held_here):
                plan.carried[change.path] = None
            else:
                plan.files[change.path] = FileMerge({change.path: None}, "theirs")
            continue
        data = _hold_or_read(store, change, plan)
        if data is None:  # held: a file ours had checked out there goes from disk
            if _checked_out(repo, our_tree, change.path, held_here):
                plan.files[change.path] = FileMerge({change.path: None}, "theirs")
            continue
        plan.files[change.path] = FileMerge({change.path: data}, "theirs")
    _leave_out_clashes(repo, our_tree, plan)
    return plan


def plan_merge(store: Store, base: str | None, head: str, theirs: str,
               machine: str) -> Plan:
    """Merge every entry ``theirs`` changed since ``base`` into HEAD's (see :mod:`rules`)."""
    repo = store.repo
    base_tree, our_tree, plan = _tree(repo, base), _tree(repo, head), Plan()
    plans, held_here = plan.files, held_paths(store)
    for change in _remote_changes(repo, base_tree, _tree(repo, theirs)):
        ours = _blob_at(repo, our_tree, change.path)
        base_data = _blob_at(repo, base_tree, change.path)
        if change.blob is None and _held_here(repo, our_tree, change.path, held_here):
            plan.carried[change.path] = None  # never changed here: their delete stands
            continue
        other = _hold_or_read(store, change, plan) if change.blob else None
        if change.blob is not None and other is None:  # held in the tree, not on disk
            if _checked_out(repo, our_tree, change.path, held_here):
                keep = {} if ours == base_data else {conflict_name(change.path, machine): ours}
                file = FileMerge({change.path: None, **keep},
                                 "conflict copy" if keep else "theirs")
                plans[change.path] = _free_conflict_names(repo, our_tree, file, plans)
            continue
        file = merge_file(change.path, base_data, ours, other, machine)
        plans[change.path] = _free_conflict_names(repo, our_tree, file, plans)
    if base is None:
        plans.update(_onboarded_elsewhere(repo, our_tree, _tree(repo, theirs)))
    _leave_out_clashes(repo, our_tree, plan)
    return plan


def held_paths(store: Store) -> frozenset[str]:
    """The paths HEAD holds without a file on disk (see :mod:`minarad.store.held`)."""
    from minarad.store.held import held_paths as recorded

    return recorded(store)


def _held_here(repo, our_tree, path: str, held_here: frozenset[str]) -> bool:
    """True when HEAD holds ``path`` without a file on disk."""
    from minarad.git.diff import is_regular
    from minarad.git.trees import lookup_blob

    found = lookup_blob(repo.object_store, our_tree, path.encode("utf-8", "surrogateescape"))
    return found is not None and (path in held_here or not is_regular(found[0]))


def _checked_out(repo, our_tree, path: str, held_here: frozenset[str]) -> bool:
    """True when HEAD holds ``path`` as a file on disk."""
    from minarad.git.trees import lookup_blob

    found = lookup_blob(repo.object_store, our_tree, path.encode("utf-8", "surrogateescape"))
    return found is not None and not _held_here(repo, our_tree, path, held_here)


def _hold_or_read(store: Store, change: FileChange, plan: Plan) -> bytes | None:
    """The remote's file to check out, or None when it is held (carried in the tree)."""
    from minarad.git.diff import is_regular
    from minarad.git.objects import read_blob
    from minarad.sync.passthrough import why_held

    blob, mode = cast(str, change.blob), cast(int, change.mode)
    size = _declared_size(store, blob) if is_regular(mode) else None
    data = None
    if is_regular(mode) and (size is None or size <= store.max_file_bytes):
        data = read_blob(store.repo.object_store, blob)
        size = len(data)
    why = why_held(store, change.path, mode, size)
    if why is None:
        return data
    plan.carried[change.path] = (mode, blob)
    plan.held.append(HeldEntry(change.path, mode, blob, *why))
    return None


def _declared_size(store: Store, blob: str) -> int | None:
    """The size blob ``blob`` declares in its header (None: not found that way), so a
    file over the limit is held without ever being read."""
    from minarad.git.fetchguard import declared_size

    return declared_size(store.repo.object_store, blob)


def _leave_out_clashes(repo, our_tree, plan: Plan) -> None:
    """A held entry whose place a folder (or a file on its way) takes stays out of the tree."""
    from minarad.sync.passthrough import clashing_reason

    gone = {p for p, f in plan.files.items() for p, d in f.writes.items() if d is None}
    gone |= {p for p, e in plan.carried.items() if e is None}
    for entry in list(plan.held):
        if _place_taken(repo, our_tree, entry.path, gone, plan):
            del plan.carried[entry.path]
            plan.held.remove(entry)
            reason, fix = clashing_reason(entry.path)
            plan.left_out.append(dataclasses.replace(entry, reason=reason, fix=fix))


def _place_taken(repo, our_tree, path: str, gone: set[str], plan: Plan) -> bool:
    """True when, after the merge, a folder stands at ``path`` or a file at one of its folders."""
    from minarad.git.trees import files_under, lookup_blob

    store, raw = repo.object_store, path.encode("utf-8", "surrogateescape")
    parts = path.split("/")
    for depth in range(1, len(parts)):
        folder = "/".join(parts[:depth])
        if folder not in gone and lookup_blob(store, our_tree, folder.encode(
                "utf-8", "surrogateescape")) is not None:
            return True
    written = {p for f in plan.files.values() for p, d in f.writes.items() if d is not None}
    if any(p.startswith(path + "/") for p in written):
        return True
    inside = files_under(store, our_tree, raw) or []
    return any(p.decode("utf-8", "surrogateescape") not in gone for p in inside)


def _onboarded_elsewhere(repo, our_tree, their_tree) -> dict[str, FileMerge]:
    """Joining a workspace that finished onboarding: drop our untouched BOOTSTRAP.md.

    The other side archived it (``BOOTSTRAP.md.done.<time>``); ours is the
    seeded template nobody answered, and keeping it would start onboarding
    again on this machine.
    """
    from minarad.git.trees import iter_files
    from minarad.sync.rules import is_untouched_seed
    from minarad.workspace.layout import BOOTSTRAP

    ours = _blob_at(repo, our_tree, BOOTSTRAP)
    if not is_untouched_seed(BOOTSTRAP, ours) or _blob_at(repo, their_tree, BOOTSTRAP):
        return {}
    archived = any(p.startswith(f"{BOOTSTRAP}.done.".encode())
                   for p, _mode, _sha in iter_files(repo.object_store, their_tree))
    return {BOOTSTRAP: FileMerge({BOOTSTRAP: None}, "deleted: onboarding was done there")} \
        if archived else {}


def _free_conflict_names(repo, our_tree, plan: FileMerge, plans: dict) -> FileMerge:
    """A conflict copy never replaces a file: an earlier copy of the same name stays."""
    from minarad.git.trees import lookup_blob

    if plan.how != "conflict copy":
        return plan
    taken = {p for other in plans.values() for p in other.writes}
    original, *copies = plan.writes
    writes = {original: plan.writes[original]}
    for path in copies:
        name, n = path, 1
        while name in taken or lookup_blob(repo.object_store, our_tree, name.encode()):
            n += 1
            stem, dot, ext = path.rpartition(".")
            name = f"{stem}-{n}.{ext}" if dot and "/" not in ext else f"{path}-{n}"
        writes[name] = plan.writes[path]
    return FileMerge(writes, plan.how)


def _apply(store: Store, name: str, whole: Plan, author: str, head, *, fast_forward=None,
           parents=()) -> None:
    from minarad.store.held import record_held

    plans = whole.files
    lines = [f"{path}: {plan.how}" for path, plan in sorted(plans.items())
             if plan.writes and plan.how != "theirs"]
    lines += [f"{e.shown}: held in the tree, not checked out ({e.reason})" for e in whole.held]
    message = (f"merge from {name}" + ("\n\n" + "\n".join(lines) if lines else "")
               if parents else f"fast-forward to {name}")
    # force: the remote's .gitignore is taken as an editor's change would be, and
    # ``minara status`` lists the tracked files it hides
    with store.transaction(author=author, source=f"sync:{name}", message=message,
                           parents=parents, fast_forward=fast_forward,
                           expect_head=head, force=True) as tx:
        for path, entry in whole.carried.items():
            tx.carry(path, entry)
        # recorded first: a record counts only while HEAD holds its entry, and a scan
        # of the disk right after the commit must already leave these entries alone
        record_held(store, whole.held, [p for p, e in whole.carried.items() if e is None])
        for plan in plans.values():
            for path, data in plan.writes.items():
                if data is None:
                    if store.read_disk(path)[0] is not None:
                        tx.delete(path)
                else:
                    tx.write(path, data)
