"""``minara doctor``: check a workspace's health, each finding with a fix hint.

Each check returns a :class:`Finding` (``ok``, ``warn`` or ``fail``). With
``fix=True`` the safe repairs run: clear stale locks (as the next writer
would), commit what is on disk (reconcile), bring the history cache and the
search index up to HEAD (rebuilding a damaged one). Nothing here deletes a
workspace file or rewrites history.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import stat
import subprocess
import time
from typing import TYPE_CHECKING

from minarad.errors import MinaraError
from minarad.store.models import Record

if TYPE_CHECKING:
    from minarad.store.store import Store

#: Less free space than this on the workspace's file system fails the check.
MIN_FREE_BYTES = 100 * 1024 * 1024
#: A git lock older than this, with no minara writer holding the workspace lock, is stale.
STALE_LOCK_SECONDS = 60.0
#: With the daemon running, how long the index and vectors may take to reach a
#: commit just made (by anyone) before a lag is reported: the daemon follows
#: every commit within ~2 s, so a lag seen for a moment is not a fault.
FOLLOW_GRACE_SECONDS = 3.0


@dataclasses.dataclass(frozen=True)
class Finding(Record):
    """One check: ``status`` is ok, warn or fail; ``fixed`` when ``--fix`` repaired it."""

    check: str
    status: str
    detail: str
    hint: str = ""
    fixed: bool = False


def _ok(check: str, detail: str) -> Finding:
    return Finding(check, "ok", detail)


def check_repository(store: Store, fix: bool) -> Finding:
    """HEAD resolves and its commit, trees and blobs are all present."""
    from minarad.git.objects import commit_tree
    from minarad.git.trees import iter_files

    head = store.head()
    if head is None:
        return Finding("repository", "warn", "no commit yet", "edit a file or run minara init")
    try:
        objects = store.repo.object_store
        missing = [p.decode("utf-8", "replace") for p, _m, blob in
                   iter_files(objects, commit_tree(store.repo, head)) if blob not in objects]
    except (KeyError, MinaraError) as exc:
        return Finding("repository", "fail", f"HEAD {head[:10]} cannot be read: {exc}",
                       "restore .git from a backup or re-clone from a remote (minara sync)")
    if missing:
        return Finding("repository", "fail", f"{len(missing)} file(s) of HEAD are missing "
                       f"their objects, e.g. {missing[0]}", "git fsck --full; re-clone")
    return _ok("repository", f"HEAD {head[:10]}: commit, trees and blobs present")


def _stale_locks(store: Store) -> list[str]:
    from minarad.git.objects import stale_object_locks
    from minarad.git.refs import lock_files

    now = time.time()
    found = stale_object_locks(str(store.git_dir / "objects"), STALE_LOCK_SECONDS)
    for path in [*lock_files(str(store.git_dir)), str(store.state_dir / "commit-in-progress")]:
        try:
            if now - os.stat(path).st_mtime > STALE_LOCK_SECONDS:
                found.append(path)
        except OSError:
            continue
    return found


def check_locks(store: Store, fix: bool) -> Finding:
    """No git lock or commit marker left behind by a killed process."""
    from minarad.store.commitrecovery import recover_interrupted_commit

    stale = _stale_locks(store)
    if not stale:
        return _ok("locks", "no stale lock")
    if fix:
        with store.lock():  # no minara writer runs while it is held
            for path in stale:
                if path.endswith(".lock"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(path)
            recover_interrupted_commit(store)
        return Finding("locks", "ok", f"removed {len(stale)} stale lock(s)", fixed=True)
    return Finding("locks", "fail", "stale: " + ", ".join(stale),
                   "minara doctor --fix removes them (under the workspace lock)")


def check_git_index(store: Store, fix: bool) -> Finding:
    """``.git/index`` can be read (a 0-byte or cut one makes ``git status`` fail)."""
    from minarad.git.index import index_damage
    from minarad.store.commitrecovery import repair_damaged_index

    damage = index_damage(str(store.git_dir / "index"))
    if damage is None:
        return _ok("git-index", ".git/index is sound")
    if fix:
        repaired = repair_damaged_index(store)
        return Finding("git-index", "ok", f".git/index was damaged ({repaired or damage}); "
                       f"rewrote it from HEAD", fixed=True)
    return Finding("git-index", "fail", f".git/index cannot be read: {damage}",
                   "minara doctor --fix rewrites it from HEAD (files on disk are untouched)")


def check_clean(store: Store, fix: bool) -> Finding:
    """What is on disk is committed (``git status`` would be clean)."""
    from minarad.store.untracked import untracked_explained

    if fix:
        skipped: list = []
        info = store.commit_disk(skipped=skipped)
        if info is not None:
            return Finding("git-status", "ok", f"committed {len(info.paths)} path(s) found "
                           f"on disk", fixed=True)
    changed, failure = _git_status(store)
    if failure:
        return Finding("git-status", "fail", f"git status fails: {failure}",
                       "minara doctor --fix, or see git status")
    unversioned = [f"{n.path}: {n.reason}" for n in untracked_explained(store)
                   if not n.reason.startswith("not committed yet")]
    if changed:
        return Finding("git-status", "warn", f"{len(changed)} change(s) on disk not committed "
                       f"yet, e.g. {changed[0]}", "start minarad, or minara doctor --fix")
    if unversioned:
        return Finding("unversioned", "warn", f"{len(unversioned)} file(s) minara cannot "
                       f"version: {unversioned[0]}", "see minara status")
    return _ok("git-status", "the working tree matches HEAD")


def _git_status(store: Store) -> tuple[list[str], str]:
    """``git status --porcelain`` lines, and git's complaint when it fails ('' when not)."""
    if shutil.which("git") is None:
        return [], ""
    proc = subprocess.run(["git", "-C", str(store.root), "status", "--porcelain"],
                          capture_output=True, text=True, errors="replace", timeout=60)
    if proc.returncode != 0:
        return [], (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[0]
    return proc.stdout.splitlines(), ""


def check_held_back(store: Store) -> Finding:
    """No saved file is held back for holding a credential (it would never be committed)."""
    from minarad.secrets.holdback import HOW_TO_ALLOW, held_on_disk

    held = held_on_disk(store)
    if held:
        return Finding("secrets", "warn", f"{len(held)} saved file(s) held back, not "
                       f"committed, for holding a credential: "
                       + "; ".join(str(h) for h in held[:3]), HOW_TO_ALLOW)
    return _ok("secrets", "no saved file holds a credential")


def check_history(store: Store, fix: bool) -> Finding:
    """The per-file history cache reflects HEAD."""
    import sqlite3

    try:
        tip = store.history_db.tip()
    except (sqlite3.Error, MinaraError) as exc:
        return Finding("history-cache", "fail", f"unreadable: {exc}",
                       "delete .git/minara/history.sqlite3 (a cache; it is rebuilt)")
    if tip == store.head():
        return _ok("history-cache", "at HEAD")
    if fix:
        with store.lock():
            store.catch_up()
        return Finding("history-cache", "ok", "caught up with HEAD", fixed=True)
    return Finding("history-cache", "warn", f"at {str(tip)[:10]}, HEAD is "
                   f"{str(store.head())[:10]}", "any read catches it up; or --fix")


def _settled(read, head, grace: float):
    """``read()`` once it equals ``head``, or its value after ``grace`` seconds."""
    deadline = time.monotonic() + grace
    value = read()
    while value != head and time.monotonic() < deadline:
        time.sleep(0.05)
        value = read()
    return value


def check_index(app, fix: bool, following: bool = False) -> Finding:
    """The search index reflects HEAD (its lag in commits is not counted, only named).

    With the daemon running (``following``) a lag gets a moment to close first.
    """
    from minarad.index.state import index_dir_for, read_state

    folder = index_dir_for(app.settings.state_dir, app.root)

    def indexed_commit():
        return read_state(folder / "state.json").get("commit") if folder.exists() else None

    head = app.store.head()
    indexed = _settled(indexed_commit, head, FOLLOW_GRACE_SECONDS if following else 0.0)
    if indexed == head:
        return _ok("search-index", "at HEAD")
    if fix:
        app.index.catch_up(wait=10.0)
        return Finding("search-index", "ok", "caught up with HEAD", fixed=True)
    return Finding("search-index", "warn", f"indexed {str(indexed)[:10]}, HEAD "
                   f"{str(head)[:10]}", "minarad catches it up; or minara doctor --fix")


def check_embeddings(app, fix: bool, following: bool = False) -> Finding:
    """Every section at HEAD has a vector (skipped, with a note, without a model)."""
    index = app.index
    if not index.model.ready:
        return _ok("embeddings", f"skipped: {index.model.reason}; search is keyword only")
    if fix:
        index.catch_up(wait=10.0)
        stats = index.catch_up_embeddings()
        if stats is not None and not stats.busy and stats.embedded + stats.removed:
            return Finding("embeddings", "ok", f"embedded {stats.embedded} section(s) at "
                           f"{(stats.commit or '-')[:10]}", fixed=True)
    head = app.store.head()
    if following:
        _settled(lambda: index.embedding_status()["embedded_commit"], head,
                 FOLLOW_GRACE_SECONDS)
    status = index.embedding_status()
    missing = max(index.engine.document_count() - status["vectors"], 0)
    embedded = status["embedded_commit"]
    if missing == 0 and embedded == head:
        return _ok("embeddings", f"{status['vectors']} vectors ({status['model']}), at HEAD")
    lag = f"{missing} section(s) without vectors" if missing else "vectors behind HEAD"
    return Finding("embeddings", "warn", f"{lag}: embedded at {str(embedded)[:10]}, HEAD "
                   f"{str(head)[:10]}", "minara index embed (minarad embeds after each "
                   "commit); or minara doctor --fix")


def check_daemon(status) -> Finding:
    """The daemon runs, and is not waiting on something."""
    if status is None or not status.running:
        return Finding("daemon", "warn", "minarad is not running: edits are committed only "
                       "by minara commands", "minara service install (or run minarad)")
    if status.state == "waiting":
        return Finding("daemon", "fail", f"minarad is stuck: {status.waiting_for}",
                       "follow the hint, or restart minarad")
    return _ok("daemon", f"minarad pid {status.pid}, watcher {status.watcher}")


def check_inotify(root) -> Finding:
    """Enough inotify watches for every folder of the workspace."""
    try:
        with open("/proc/sys/fs/inotify/max_user_watches") as fh:
            limit = int(fh.read())
    except (OSError, ValueError):
        return _ok("inotify", "no inotify limit to check on this system")
    folders = 0
    for _top, dirs, _files in os.walk(root, onerror=lambda e: None):
        dirs[:] = [d for d in dirs if d != ".git"]
        folders += 1
    if folders * 2 > limit:
        return Finding("inotify", "warn", f"{folders} folders, max_user_watches {limit}",
                       "sudo sysctl fs.inotify.max_user_watches=524288")
    return _ok("inotify", f"{folders} folders, max_user_watches {limit}")


def check_conflicts(store: Store) -> Finding:
    """No conflict copies left by sync."""
    from minarad.sync import conflict_copies

    found = conflict_copies(store)
    if found:
        return Finding("sync-conflicts", "warn", f"{len(found)} file(s) kept both versions: "
                       + ", ".join(found[:5]), "merge each into its original, then delete it")
    return _ok("sync-conflicts", "none")


def check_held(store: Store) -> Finding:
    """The remote's entries not checked out here, and those a merge could not hold."""
    from minarad.store.held import held_entries
    from minarad.sync.state import SyncState
    from minarad.workspace.paths import printable_path

    held = held_entries(store)
    left = [e for r in SyncState(store.state_dir).read().values() if isinstance(r, dict)
            for e in r.get("left_out") or []]
    needs_fix = [e for e in held if stat.S_ISREG(e.mode)]  # symlinks, submodules need none
    shown = [f"'{e.shown}' ({e.reason})" for e in needs_fix] + \
        [f"'{printable_path(e['path'])}' ({e['reason']})" for e in left]
    if shown:
        fixes = sorted({e.fix for e in needs_fix} | {e["fix"] for e in left})
        return Finding("sync-held", "warn", f"{len(shown)} remote entr(ies) not checked out: "
                       + "; ".join(shown[:5]), " / ".join(fixes[:3]))
    return _ok("sync-held", f"{len(held)} symlink(s) or submodule(s) kept in the tree, not "
               f"checked out" if held else "none")


def check_remotes(store: Store, settings) -> list[Finding]:
    """Every remote answers, and its last sync did not fail."""
    from minarad.git import remotes
    from minarad.sync import credentials
    from minarad.sync.state import SyncState

    out = []
    state = SyncState(store.state_dir).read()
    for name, url in remotes.list_remotes(store.repo).items():
        try:
            remotes.ls_remote(store.repo, url, credentials(settings))
            error = (state.get(name) or {}).get("last_error")
            if error:
                out.append(Finding(f"remote:{name}", "warn", f"{remotes.shown_url(url)} "
                                   f"reachable, but its last sync failed: {error}",
                                   "see the error: it names what to change"))
                continue
            out.append(_ok(f"remote:{name}", f"{remotes.shown_url(url)} reachable"))
        except MinaraError as exc:
            out.append(Finding(f"remote:{name}", "warn", exc.message,
                               "check the network, the URL (minara remote list) and "
                               "credentials (MINARA_SYNC_TOKEN)"))
    return out


def check_knowledge(app) -> Finding:
    """``knowledge/grants.json`` reads, and every record file reads as a record.

    An unreadable grants file withholds every knowledge record (searches,
    context); an unreadable record is skipped everywhere. Both name the file
    and line; neither is rewritten.
    """
    knowledge = app.knowledge
    grants = knowledge.grants_problem()
    if grants is not None:
        where = grants.message.removesuffix("; fix it by hand")
        return Finding("knowledge", "warn", f"{where}: knowledge records are withheld from "
                       f"search and context until it is fixed",
                       "fix knowledge/grants.json by hand")
    problems = knowledge.problems()
    if problems:
        more = f" (and {len(problems) - 1} more: minara fact list)" if len(problems) > 1 else ""
        return Finding("knowledge", "warn", f"{problems[0]}{more}; skipped until fixed",
                       "fix the record's front matter by hand")
    return _ok("knowledge", "grants and records read")


def check_disk(root) -> Finding:
    """Free space on the workspace's file system."""
    free = shutil.disk_usage(root).free
    if free < MIN_FREE_BYTES:
        return Finding("disk", "fail", f"{free // 2**20} MiB free",
                       "free some space: commits and the index need room")
    return _ok("disk", f"{free // 2**20} MiB free")


def run_checks(app, daemon_status, *, fix: bool = False) -> list[Finding]:
    """Every check, in order (locks first: the repairs after them need the lock)."""
    store = app.store
    findings = [check_locks(store, fix), check_repository(store, fix),
                check_git_index(store, fix)]
    if findings[-1].status == "fail":
        return findings + [check_disk(app.root)]
    following = daemon_status is not None and bool(daemon_status.running)
    findings += [check_clean(store, fix), check_held_back(store), check_history(store, fix),
                 check_index(app, fix, following), check_embeddings(app, fix, following),
                 check_daemon(daemon_status), check_inotify(app.root), check_conflicts(store),
                 check_knowledge(app), check_held(store),
                 *check_remotes(store, app.settings), check_disk(app.root)]
    return findings
