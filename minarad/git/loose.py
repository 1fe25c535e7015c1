"""Loose objects read straight from ``.git/objects``, without opening the repository.

Opening the repository (importing dulwich's repository and object store,
reading the pack indexes) costs a fresh process tens of milliseconds. The
commit a CLI write just made, and its root tree, are loose objects; what a
reader needs from them (a commit's tree, parents and first line, a tree's
entry) is read here in a few hundred microseconds. Each function answers
None when an object is not loose (packed, missing or damaged): the caller
then asks the repository, as before.
"""

from __future__ import annotations

import os
import zlib

_HEX = frozenset(b"0123456789abcdef")


def read_loose(git_dir: str | os.PathLike[str], object_id: str, kind: bytes
               ) -> bytes | None:
    """The body of loose object ``object_id`` if it is one of ``kind``, else None."""
    if len(object_id) != 40 or not _HEX.issuperset(object_id.encode("ascii", "replace")):
        return None
    path = os.path.join(git_dir, "objects", object_id[:2], object_id[2:])
    try:
        with open(path, "rb") as fh:
            raw = zlib.decompress(fh.read())
    except (OSError, zlib.error):
        return None
    header, _, body = raw.partition(b"\0")
    found, _, size = header.partition(b" ")
    if found != kind or not size.isdigit() or int(size) != len(body):
        return None
    return body


class LooseCommit:
    """What a reader needs of a commit: tree, parents, author, time and message."""

    __slots__ = ("tree", "parents", "author", "author_time", "author_timezone", "message")

    def __init__(self, tree: str, parents: list[str], author: bytes, author_time: int,
                 author_timezone: int, message: bytes):
        self.tree = tree
        self.parents = parents
        self.author = author
        self.author_time = author_time
        self.author_timezone = author_timezone
        self.message = message


def loose_commit(git_dir: str | os.PathLike[str], commit_id: str) -> LooseCommit | None:
    """Commit ``commit_id`` parsed from its loose object (None: not loose, or unreadable)."""
    body = read_loose(git_dir, commit_id, b"commit")
    if body is None:
        return None
    head, _, message = body.partition(b"\n\n")
    tree, parents, author = None, [], None
    for line in head.split(b"\n"):
        key, _, value = line.partition(b" ")
        if key == b"tree":
            tree = value.decode("ascii", "replace")
        elif key == b"parent":
            parents.append(value.decode("ascii", "replace"))
        elif key == b"author":
            author = value
    if tree is None or author is None:
        return None
    ident, _, when = author.rpartition(b"> ")
    seconds, _, zone = when.partition(b" ")
    if not ident or not seconds.isdigit() or len(zone) != 5 or zone[:1] not in (b"+", b"-") \
            or not zone[1:].isdigit():
        return None
    offset = (int(zone[1:3]) * 3600 + int(zone[3:5]) * 60) * (-1 if zone[:1] == b"-" else 1)
    return LooseCommit(tree, parents, ident + b">", int(seconds), offset, message)


def loose_tree_entry(git_dir: str | os.PathLike[str], tree_id: str, name: bytes
                     ) -> tuple[bool, str | None]:
    """``(True, id)`` of entry ``name`` of loose tree ``tree_id`` (``(True, None)``: no such
    entry); ``(False, None)`` when the tree is not loose or cannot be read."""
    body = read_loose(git_dir, tree_id, b"tree")
    if body is None:
        return False, None
    at = 0
    while at < len(body):
        space = body.find(b" ", at)
        nul = body.find(b"\0", space)
        if space < 0 or nul < 0 or nul + 21 > len(body):
            return False, None
        if body[space + 1:nul] == name:
            return True, body[nul + 1:nul + 21].hex()
        at = nul + 21
    return True, None
