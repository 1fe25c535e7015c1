"""The records the wiki returns (rendered by the CLI, the gateway and the MCP server)."""

from __future__ import annotations

import dataclasses

from minarad.store.models import Record


@dataclasses.dataclass(frozen=True)
class PageInfo(Record):
    """A page in a listing: its name, channel ("" for the workspace), title and file."""

    name: str
    channel: str
    title: str
    file: str


@dataclasses.dataclass(frozen=True)
class Backlink(Record):
    """A page that links to another: who links, with which label, on which line."""

    name: str
    channel: str
    title: str
    file: str
    line: int
    label: str = ""


@dataclasses.dataclass(frozen=True)
class OutLink(Record):
    """A ``[[link]]`` of a page: its target and whether that page exists (for the caller)."""

    source: str
    target: str
    label: str
    line: int
    exists: bool
    file: str | None = None


@dataclasses.dataclass(frozen=True)
class Page(Record):
    """A page's text at a version, with who saved it and the pages that link to it."""

    name: str
    channel: str
    title: str
    file: str
    text: str
    version: int
    commit: str | None
    author: str | None
    time: str | None
    blob_id: str | None
    backlinks: tuple = ()


@dataclasses.dataclass(frozen=True)
class PageWrite(Record):
    """What a save, rename, delete or restore of a page did."""

    name: str
    channel: str
    title: str
    file: str
    version: int
    changed: bool
    commit: str | None
    previous_version: int


@dataclasses.dataclass(frozen=True)
class MoveResult(Record):
    """A move: the commit and every ``(old name, new name)``, plus pages whose links changed."""

    commit: str | None
    moved: tuple
    links_rewritten_in: tuple = ()


@dataclasses.dataclass(frozen=True)
class TreeNode(Record):
    """One segment of the page tree: a page (``title`` set) or a folder, and its children."""

    segment: str
    name: str
    title: str | None
    children: tuple = ()
