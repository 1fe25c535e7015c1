"""One memory on many machines: remotes, sync, and what ``minara status`` says of them.

- :mod:`rules` — per-file merge rules (pure).
- :mod:`engine` — one sync: fetch, fast-forward or merge through the store's
  transaction, push, retry a lost race.
- :mod:`state` — the last sync and last error per remote, in ``.git/minara/``.
- :mod:`service` — the daemon's companion: debounced after commits, on an
  interval, with backoff while offline.

Remotes live in the repository's ``.git/config`` (:mod:`minarad.git.remotes`),
so ``git remote -v`` shows them and ``git push`` could use them too.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from minarad.sync.state import SyncState

if TYPE_CHECKING:
    from minarad.store.store import Store


def machine_name(settings) -> str:
    """This machine's name in conflict copies (``MINARA_SYNC_MACHINE``, else the host name)."""
    import socket

    return settings.sync_machine or socket.gethostname().split(".")[0] or "machine"


def credentials(settings):
    """Credentials for http(s) remotes from the settings (None when no token is set)."""
    from minarad.git.remotes import Credentials

    if not settings.sync_token:
        return None
    return Credentials(settings.sync_username or None, settings.sync_token)


def sync_remote(store: Store, settings, name: str, *, commit_edits: bool = True):
    """Sync with remote ``name`` and record the outcome for ``minara status``.

    Returns:
        The :class:`minarad.sync.engine.SyncResult`.

    Raises:
        MinaraError: as :func:`minarad.sync.engine.sync` (the error is recorded too).
    """
    from minarad.errors import MinaraError
    from minarad.sync.engine import sync

    state = SyncState(store.state_dir)
    try:
        result = sync(store, name, machine=machine_name(settings), creds=credentials(settings),
                      commit_edits=commit_edits, limits=fetch_limits(settings, state, name))
    except MinaraError as exc:
        state.record_failure(name, exc.message, refused=refused_commit(exc))
        raise
    merged = result.action in ("merge", "fast-forward")
    state.record_success(name, result.head, clashed=list(result.clashed) if merged else None,
                         left_out=[e.to_dict() for e in result.left_out] if merged else None)
    return result


def fetch_limits(settings, state: SyncState, name: str):
    """What a fetch from ``name`` accepts: objects up to ``sync_max_object_bytes`` (never
    below ``max_file_bytes``), and not the remote commit refused last time as one git
    would refuse."""
    from minarad.git.fetchguard import FetchLimits, ObjectTooLarge

    refused = state.read().get(name, {}).get("refused") or {}
    code = (refused.get("code") if isinstance(refused, dict) else None) or ObjectTooLarge.code
    # a commit refused for its size (by an earlier version) is fetched again: it is held now
    known = {refused["commit"]: (code, refused.get("message") or "")} \
        if isinstance(refused, dict) and refused.get("commit") and code != ObjectTooLarge.code \
        else {}
    return FetchLimits(max(settings.sync_max_object_bytes, settings.max_file_bytes), known)


def refused_commit(exc) -> tuple[str, str] | None:
    """``(commit, error code)`` of the remote commit a fetch refused (an object git would
    refuse, or one over the limit), else None: not fetched again while the remote holds it."""
    from minarad.git.fetchguard import ObjectTooLarge
    from minarad.git.fsckobjects import HostileObject

    commit = exc.details.get("commit") if isinstance(exc, (ObjectTooLarge, HostileObject)) \
        else None
    return (commit, exc.code) if commit else None


def remote_names(store: Store) -> list[str]:
    """Every remote configured in the workspace's repository."""
    from minarad.git.remotes import list_remotes

    return list(list_remotes(store.repo))


def sync_all(store: Store, settings, *, commit_edits: bool = True) -> list:
    """Sync with every configured remote; return the results (errors recorded, not raised)."""
    from minarad.errors import MinaraError

    results = []
    for name in remote_names(store):
        try:
            results.append(sync_remote(store, settings, name, commit_edits=commit_edits))
        except MinaraError as exc:
            results.append(exc)
    return results


def status(store: Store) -> dict:
    """Per remote: URL, ahead/behind (as of the last fetch), last sync, last error, the
    remote's entries its last merge could not hold (``left_out``); the conflict copies in
    HEAD that wait to be resolved; and HEAD's entries not checked out (``held``)."""
    from minarad.store.heldmark import holds_any

    out = _remote_status(store) if may_have_remotes(store) else []
    held: list[dict] = []
    if holds_any(store):  # the records' module only when something is held
        from minarad.store.held import held_entries

        held = [e.to_dict() for e in held_entries(store)]
    return {"remotes": out, "conflicts": conflict_copies(store), "held": held}


def may_have_remotes(store: Store) -> bool:
    """False when ``.git/config`` names no remote (read as bytes: no config parser loaded).

    A config that includes another file is read in full by :func:`status`.
    """
    from minarad.git.refs import common_dir

    try:
        with open(os.path.join(common_dir(str(store.git_dir)), "config"), "rb") as fh:
            text = fh.read().lower()
    except OSError:
        return True  # let the config reader say what is wrong
    return b"remote" in text or b"include" in text


def _remote_status(store: Store) -> list[dict]:
    """Each remote: URL, ahead/behind as of the last fetch, and what the last sync left."""
    from minarad.git import ancestry, remotes
    from minarad.sync.engine import current_branch

    state = SyncState(store.state_dir).read()
    out = []
    try:
        branch = current_branch(store)
    except Exception:
        branch = None
    for name, url in remotes.list_remotes(store.repo).items():
        tracking = remotes.read_tracking(store.repo, name, branch) if branch else None
        ahead, behind = ancestry.ahead_behind(store.repo, store.head(), tracking)
        out.append({"name": name, "url": remotes.shown_url(url), "ahead": ahead,
                    "behind": behind, **state.get(name, {})})
    return out


def conflict_copies(store: Store) -> list[str]:
    """The tracked ``name.conflict-<machine>.<ext>`` files (a merge kept both versions).

    Tracked as ``git status`` sees it: the paths of ``.git/index``, which
    every minara commit updates (cheaper to read than HEAD's trees).
    """
    from minarad.store.diskscan import index_may_hold

    if store.head() is None or not index_may_hold(store, b".conflict-"):
        return []
    from minarad.sync.rules import is_conflict_copy

    return sorted(path for path in store.tracked_files()
                  if ".conflict-" in path and is_conflict_copy(path))  # the test is the slow part
