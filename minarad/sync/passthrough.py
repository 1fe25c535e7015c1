"""What a merge carries without checking it out: the remote's entries minara cannot hold.

A remote written by plain git may hold a symlink, a submodule, a file over
the size limit, one this machine's ``.gitignore`` ignores, or a name minara
refuses (a control character, a workspace folder's name, ``.gitmodules``, a
name that is not UTF-8).
None of these may stop a sync, and none may be dropped from the shared
remote: the merge keeps each in its tree as the remote had it (a held
entry, :mod:`minarad.store.held`), writes no file, and lists it with the
reason and the fix.
"""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING

from minarad.errors import MinaraError
from minarad.workspace.paths import UNREADABLE_NAME, is_utf8_name, shown_path

if TYPE_CHECKING:
    from minarad.store.store import Store

_GITLINK = 0o160000
#: The fix of an entry that needs none: git itself checks it out.
_NOTHING_TO_DO = ("nothing to do: it stays in every commit and on the remote, and a git "
                  "clone checks it out")


def why_held(store: Store, path: str, mode: int, size: int | None) -> tuple[str, str] | None:
    """``(reason, fix)`` when the remote's entry at ``path`` cannot be checked out here.

    Args:
        store: the workspace (its ignore rules and size limit apply).
        path: the entry's path, as the remote's tree names it.
        mode: its git mode.
        size: its size in bytes (None: not known, not checked).
    """
    if stat.S_ISLNK(mode):
        return "a symbolic link; minara does not follow links", _NOTHING_TO_DO
    if mode == _GITLINK:
        return "a submodule (a commit of another repository)", _NOTHING_TO_DO
    if not is_utf8_name(path):
        return (f"a name that is {UNREADABLE_NAME}",
                f"rename it where it was made (git mv '{shown_path(path)}' <new name>), then "
                f"sync; until then it stays in every commit and on the remote as it is")
    try:
        store.check_writable_path(path)
    except MinaraError as exc:
        if exc.code == "path_ignored":
            return ("ignored by this machine's .gitignore (or an editor temporary), so "
                    "minara does not version it here",
                    f"remove it where it was made (git rm --cached '{path}'), or stop "
                    f"ignoring it in .gitignore; then sync")
        return exc.message, (f"rename it where it was made (git mv '{path}' <new name>), "
                             f"then sync")
    if size is not None and size > store.max_file_bytes:
        return (f"{size:,} bytes, over the {store.max_file_bytes:,}-byte limit",
                "raise MINARA_MAX_FILE_BYTES, or remove it where it was made; then sync")
    return None


def clashing_reason(path: str) -> tuple[str, str]:
    """``(reason, fix)`` of a remote entry that cannot even stay in the merge's tree:
    a folder of this workspace, or a file on its way, takes its place."""
    return (f"{shown_path(path)} is a folder here, or a folder of it is a file here, so the merge "
            f"cannot hold it; it stays in the remote's commit",
            f"rename it where it was made (git mv '{shown_path(path)}' <new name>), then sync")
