"""Check fetched objects as ``git fsck --strict`` would, before any ref records them.

Git's ``transfer.fsckObjects`` refuses a pack holding objects that could
hurt a checkout or that ``git fsck --strict`` rejects; these checks do the
same for a fetch held in quarantine (:mod:`minarad.git.quarantine`):

- commits: well formed (tree, parents, author and committer lines);
- trees: no empty, ``.``, ``..`` or ``/``-holding name, no ``.git`` as git,
  NTFS or HFS+ read it (``.GIT``, ``git~1``, ``.git.``), no symlink named
  ``.gitmodules``, modes git writes (no ``100664``, no zero padding),
  entries sorted and unique;
- ``.gitmodules`` blobs: no submodule name climbing with ``..``, no URL or
  path that would read as a command-line option;
- nothing the fetched commit does not use (a remote sends only that).

Blobs other than ``.gitmodules`` are never read: their sizes are the
fetch's business.
"""

from __future__ import annotations

import io
import re
import stat
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from minarad.errors import MinaraError

if TYPE_CHECKING:
    from minarad.git.types import ObjectStore

_MODES = {b"100644", b"100755", b"120000", b"160000", b"40000"}
_GITLINK = 0o160000
#: Code points HFS+ ignores in names (as git's ``is_hfs_dotgit`` lists them).
_HFS_IGNORED = frozenset([0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F),
                          *range(0x206A, 0x2070), 0xFEFF])
#: A tree entry whose mode git writes and whose name no rule can refuse: ASCII, not
#: starting with a dot, no ``~`` or ``:`` (so never ``.git``, ``git~1`` or
#: ``.gitmodules`` however read), not ``..``.
_PLAIN_ENTRY = re.compile(rb"(100644|100755|120000|160000|40000) ([A-Za-z0-9_+-][A-Za-z0-9_.+ -]*)"
                          rb"\x00(.{20})", re.DOTALL)
_MODE_OF = {m: int(m, 8) for m in _MODES}


class HostileObject(MinaraError):
    """A fetched object that git itself would refuse; nothing of the fetch was kept."""

    code = "remote_object_refused"


def check_fetched(store: ObjectStore, known: ObjectStore, tip: bytes,
                  new_ids: Iterable[bytes]) -> None:
    """Check what a fetch of ``tip`` brought; raise on the first bad object.

    Args:
        store: the store holding the fetched objects (and, through it, the known ones).
        known: the repository's own store: objects there were checked before.
        tip: the fetched commit.
        new_ids: every object id the fetch brought.

    Raises:
        HostileObject: with the commit, the object and what is wrong.
    """
    used: set[bytes] = set()
    todo, trees = [tip], []
    while todo:
        commit_id = todo.pop()
        if commit_id in used or commit_id in known:
            continue
        used.add(commit_id)
        commit = _parsed(store, commit_id, b"commit", tip)
        trees.append(commit.tree)
        todo.extend(commit.parents)
    while trees:
        tree_id = trees.pop()
        if tree_id in used or tree_id in known:
            continue
        used.add(tree_id)
        for name, mode, sha in _tree_entries(store, tree_id, tip):
            if stat.S_ISDIR(mode):
                trees.append(sha)
            elif mode != _GITLINK:
                used.add(sha)
                if _may_fold_to_dot(name) and _fold(name) == ".gitmodules" and sha not in known:
                    _check_gitmodules(store, sha, tip)
    extra = [sha for sha in new_ids if sha not in used and sha not in known]
    if extra:
        raise _refused(tip, extra[0], f"{len(extra)} object(s) the commit does not use")


def _refused(tip: bytes, sha: bytes, what: str) -> HostileObject:
    commit = tip.decode()
    return HostileObject(
        f"the remote's commit {commit[:12]} was refused, nothing of it was kept: object "
        f"{sha.decode()[:12]}: {what} (git fsck --strict refuses it too); remove the commit "
        f"from the remote (git reset, then git push --force there) and sync again",
        commit=commit, object=sha.decode())


def _parsed(store: ObjectStore, sha: bytes, kind: bytes, tip: bytes) -> Any:
    from dulwich.objects import ShaFile

    try:
        type_num, raw = store.get_raw(sha)
    except KeyError:
        raise _refused(tip, sha, "missing") from None
    obj = ShaFile.from_raw_string(type_num, raw)
    if obj.type_name != kind:
        raise _refused(tip, sha, f"a {obj.type_name.decode()} where a {kind.decode()} belongs")
    try:
        obj.check()
    except Exception as exc:  # dulwich's ObjectFormatException and parse errors
        raise _refused(tip, sha, f"a malformed {kind.decode()}: {exc}") from None
    return obj


def _tree_entries(store: ObjectStore, sha: bytes, tip: bytes) -> list[tuple[str, int, bytes]]:
    """The entries of tree ``sha`` from its raw bytes, each name and mode checked."""
    try:
        type_num, raw = store.get_raw(sha)
    except KeyError:
        raise _refused(tip, sha, "missing") from None
    if type_num != 2:
        raise _refused(tip, sha, "not a tree where a tree belongs")
    plain = _plain_entries(raw)
    if plain is not None:
        return plain
    out, pos, last, names = [], 0, None, set()
    while pos < len(raw):
        space, nul = raw.find(b" ", pos), raw.find(b"\0", pos)
        if space < 0 or nul < space or nul + 21 > len(raw):
            raise _refused(tip, sha, "a cut or malformed tree")
        mode_raw, name_raw = raw[pos:space], raw[space + 1:nul]
        entry = raw[nul + 1:nul + 21].hex().encode()
        pos = nul + 21
        name = name_raw.decode("utf-8", "surrogateescape")
        if mode_raw not in _MODES:
            shown = mode_raw.decode("ascii", "replace")
            raise _refused(tip, sha, f"entry {name!r} has mode {shown}")
        mode = int(mode_raw, 8)
        if name_raw in (b"", b".", b"..") or b"/" in name_raw:
            raise _refused(tip, sha, f"an entry named {name!r}")
        if _is_dotgit(name):
            raise _refused(tip, sha, f"an entry named {name!r}, which git reads as .git")
        if stat.S_ISLNK(mode) and _fold(name) == ".gitmodules":
            raise _refused(tip, sha, ".gitmodules is a symbolic link")
        key = name_raw + (b"/" if stat.S_ISDIR(mode) else b"")
        if (last is not None and key <= last) or name_raw in names:
            raise _refused(tip, sha, f"entries out of order or twice at {name!r}")
        last = key
        names.add(name_raw)
        out.append((name, mode, entry))
    return out


def _plain_entries(raw: bytes) -> list[tuple[str, int, bytes]] | None:
    """The entries of a tree whose every entry is plain (:data:`_PLAIN_ENTRY`) and
    which are sorted and unique; None when one is not (the full check decides).

    Most trees are so, and read this way several times faster: no name of such
    an entry needs the checks for ``.git``, ``.gitmodules`` or path tricks.
    """
    out, pos, last, names = [], 0, b"", set()
    for match in _PLAIN_ENTRY.finditer(raw):
        if match.start() != pos:
            return None
        mode_raw, name_raw, entry = match.groups()
        key = name_raw + b"/" if mode_raw == b"40000" else name_raw
        if key <= last or name_raw in names:  # out of order, or twice
            return None
        pos, last = match.end(), key
        names.add(name_raw)
        out.append((name_raw.decode("ascii"), _MODE_OF[mode_raw], entry.hex().encode()))
    return out if pos == len(raw) else None


def _may_fold_to_dot(name: str) -> bool:
    """False for a name :func:`_fold` cannot turn into one starting with a dot."""
    return name.startswith(".") or not name.isascii()


def _fold(name: str) -> str:
    """``name`` as NTFS or HFS+ may read it: ignorable code points dropped, lower case,
    trailing dots and spaces gone (``.GITMODULES.``)."""
    if not name.isascii():
        name = "".join(ch for ch in name if ord(ch) not in _HFS_IGNORED)
    return name.lower().rstrip(". ")


def _is_dotgit(name: str) -> bool:
    """``.git`` as git, NTFS (``.git.``, ``git~1``) or HFS+ (``.g\u200cit``) reads it."""
    return _fold(name.split(":", 1)[0]) in (".git", "git~1")


def _check_gitmodules(store: ObjectStore, sha: bytes, tip: bytes) -> None:
    """A ``.gitmodules`` blob: no name with ``..``, no URL or path like an option."""
    from dulwich.config import ConfigFile

    type_num, raw = store.get_raw(sha)
    if type_num != 3:
        raise _refused(tip, sha, ".gitmodules is not a file")
    try:
        config = ConfigFile.from_file(io.BytesIO(raw))
    except Exception:  # unparsable: git only notes it
        return
    for section in config.sections():
        if len(section) != 2 or section[0] != b"submodule":
            continue
        name = section[1]
        if b".." in name.replace(b"\\", b"/").split(b"/"):
            raise _refused(tip, sha, f"a submodule name climbing with '..': {name!r}")
        for key in (b"url", b"path"):
            try:
                value = config.get(section, key)
            except KeyError:
                continue
            if value.lstrip().startswith(b"-"):
                raise _refused(tip, sha, f"a submodule {key.decode()} that reads as an "
                                         f"option: {value!r}")
