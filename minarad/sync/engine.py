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
from minarad.store.models import Record
from minarad.sync.rules import CLASHED, FileMerge, merge_file

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
    """

    remote: str
    action: str
    head: str | None
    pushed: bool
    merged: tuple = ()
    conflicts: tuple = ()
    retries: int = 0
    clashed: tuple = ()


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
    with sync_lock(store):
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
        action, merged, conflicts, clashed = integrate(store, name, theirs, machine=machine,
                                                       author=author)
        crash_point("sync-after-merge")
        head = store.head()
        if head is None or head == theirs:
            return SyncResult(name, action, head, False, merged, conflicts, attempt, clashed)
        check_push(store.root, name, head, theirs)
        try:
            remotes.push(store.repo, url, branch, head, theirs, creds)
        except remotes.PushRejected:
            time.sleep(0.05 * attempt)
            continue
        crash_point("sync-after-push")
        remotes.set_tracking(store.repo, name, branch, head)
        return SyncResult(name, "pushed" if action == "up-to-date" else action, head, True,
                          merged, conflicts, attempt, clashed)
    raise Busy(f"remote {name} kept moving: {retries + 1} pushes lost the race; try again",
               code="sync_race", remote=name)


def integrate(store: Store, name: str, theirs: str | None, *, machine: str, author: str
              ) -> tuple[str, tuple, tuple, tuple]:
    """Bring ``theirs`` into HEAD; return ``(action, merged paths, conflict copies, paths
    whose lines clashed)``."""
    for _ in range(_HEAD_RETRIES):
        try:
            with store.lock():
                return _integrate_once(store, name, theirs, machine, author)
        except Busy as exc:
            if exc.code != "head_moved":
                raise
    raise Busy("edits kept arriving while merging; try again", code="head_moved")


def _integrate_once(store: Store, name, theirs, machine, author):
    from minarad.git import remotes

    repo, head = store.repo, store.head()
    if theirs is None or theirs == head or (head and remotes.is_ancestor(repo, theirs, head)):
        return "up-to-date", (), (), ()
    if head is None or remotes.is_ancestor(repo, head, theirs):
        plans = plan_fast_forward(store, head, theirs)
        try:
            _apply(store, name, plans, author, head, fast_forward=theirs)
            return "fast-forward", tuple(sorted(plans)), (), ()
        except InvalidInput as exc:  # file modes differ: a merge commit says the same
            if exc.code != "fast_forward_mismatch":
                raise
    # head is None only before the first commit, whose sync fast-forwards (or fails above)
    head = cast(str, head)
    plans = plan_merge(store, remotes.merge_base(repo, head, theirs), head, theirs, machine)
    _apply(store, name, plans, author, head, parents=(theirs,))
    conflicts = tuple(p for plan in plans.values() if plan.how == "conflict copy"
                      for p in plan.writes if p not in plans)
    clashed = tuple(sorted(p for p, plan in plans.items() if plan.how == CLASHED))
    return ("merge", tuple(sorted(p for p, plan in plans.items() if plan.writes)), conflicts,
            clashed)


def _tree(repo, commit: str | None):
    from minarad.git.objects import commit_tree

    return commit_tree(repo, commit) if commit else None


def _blob_at(repo, tree, path: str) -> bytes | None:
    from minarad.git.objects import read_blob
    from minarad.git.trees import lookup_blob

    found = lookup_blob(repo.object_store, tree, path.encode("utf-8", "surrogateescape"))
    return read_blob(repo.object_store, found[1].decode()) if found else None


def _remote_changes(repo: Repo, old_tree: bytes | None, new_tree: bytes | None
                    ) -> list[FileChange]:
    """The files that differ between two trees, names kept byte for byte.

    A name that is not UTF-8 is refused with the reason: minara never
    versions such names, and renaming it on the way in would be a change
    nobody made.
    """
    from minarad.git.diff import diff_trees
    from minarad.workspace.paths import UNREADABLE_NAME, is_utf8_name, shown_path

    changes = diff_trees(repo.object_store, old_tree, new_tree, names="surrogateescape")
    for change in changes:
        if not is_utf8_name(change.path):
            shown = shown_path(change.path)
            raise InvalidInput(f"the remote's history holds '{shown}', a name that is "
                               f"{UNREADABLE_NAME}; rename it where it was made (git mv) and "
                               f"sync again; nothing was changed here",
                               code="remote_path_not_utf8", path=shown)
    return changes


def plan_fast_forward(store: Store, head: str | None, theirs: str) -> dict[str, FileMerge]:
    """Every file that differs from HEAD to ``theirs``, as ``theirs`` has it."""
    from minarad.git.diff import is_regular
    from minarad.git.objects import read_blob

    repo = store.repo
    plans = {}
    for change in _remote_changes(repo, _tree(repo, head), _tree(repo, theirs)):
        if change.blob is None or is_regular(change.mode):
            data = read_blob(repo.object_store, change.blob) if change.blob else None
            plans[change.path] = FileMerge({change.path: data}, "theirs")
    return plans


def plan_merge(store: Store, base: str | None, head: str, theirs: str,
               machine: str) -> dict[str, FileMerge]:
    """Merge every file ``theirs`` changed since ``base`` into HEAD's (see :mod:`rules`)."""
    from minarad.git.diff import is_regular
    from minarad.git.objects import read_blob

    repo = store.repo
    base_tree, our_tree = _tree(repo, base), _tree(repo, head)
    plans: dict[str, FileMerge] = {}
    for change in _remote_changes(repo, base_tree, _tree(repo, theirs)):
        if change.blob is not None and not is_regular(change.mode):
            continue
        other = read_blob(repo.object_store, change.blob) if change.blob else None
        plan = merge_file(change.path, _blob_at(repo, base_tree, change.path),
                          _blob_at(repo, our_tree, change.path), other, machine)
        plans[change.path] = _free_conflict_names(repo, our_tree, plan, plans)
    if base is None:
        plans.update(_onboarded_elsewhere(repo, our_tree, _tree(repo, theirs)))
    return plans


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


def _apply(store: Store, name: str, plans: dict, author: str, head, *, fast_forward=None,
           parents=()) -> None:
    lines = [f"{path}: {plan.how}" for path, plan in sorted(plans.items())
             if plan.writes and plan.how != "theirs"]
    message = (f"merge from {name}" + ("\n\n" + "\n".join(lines) if lines else "")
               if parents else f"fast-forward to {name}")
    with store.transaction(author=author, source=f"sync:{name}", message=message,
                           parents=parents, fast_forward=fast_forward,
                           expect_head=head) as tx:
        for plan in plans.values():
            for path, data in plan.writes.items():
                if data is None:
                    if store.read_disk(path)[0] is not None:
                        tx.delete(path)
                else:
                    tx.write(path, data)
