"""``minara wiki get PAGE`` and ``minara wiki list`` without click, dulwich or tantivy.

The plain read (``wiki get PAGE [--channel ID]``, with ``-w``/``--as``
before or after) prints the page as it is on disk, then the pages that
link to it from the link table (read with SQLite, no dulwich), when that
table is at HEAD; ``wiki list [PREFIX] [--tree] [--channel ID]`` prints
the table's pages. Anything else (``--json``, ``--version``, a table behind
HEAD, a missing page) goes to click, which gives the same answer more
slowly. The renderers here are shared by both paths.
"""

from __future__ import annotations

import sys

from minarad.errors import MinaraError, NotFound

_GLOBAL = {"--workspace": "workspace", "-w": "workspace", "--as": "author"}
_AFTER = {"--channel": "channel", **_GLOBAL}


def parse_fast_wiki_get(args: list[str]) -> dict | None:
    """The options of a plain ``wiki get PAGE``, or None for anything else."""
    from minarad.cli.fastpath import take_options

    opts: dict = {}
    rest = take_options(list(args), _GLOBAL, opts)
    if rest is None or rest[:2] != ["wiki", "get"] or len(rest) < 3:
        return None
    rest = take_options(rest[2:], _AFTER, opts)
    if not rest or rest[0].startswith("-"):
        return None
    opts["page"], rest = rest[0], rest[1:]
    rest = take_options(rest, _AFTER, opts)
    return opts if rest == [] else None


def parse_fast_wiki_list(args: list[str]) -> dict | None:
    """The options of a plain ``wiki list [PREFIX] [--tree]``, or None for anything else."""
    from minarad.cli.fastpath import take_options

    opts: dict = {"tree": False, "prefix": ""}
    rest = take_options(list(args), _GLOBAL, opts)
    if rest is None or rest[:2] != ["wiki", "list"]:
        return None
    rest = rest[2:]
    while rest:
        if rest[0] == "--tree":
            opts["tree"], rest = True, rest[1:]
        elif not rest[0].startswith("-") and not opts["prefix"]:
            opts["prefix"], rest = rest[0], rest[1:]
        else:
            taken = take_options(rest[:2], _AFTER, opts)
            if taken is None or taken == rest[:2]:
                return None
            rest = taken + rest[2:]
    return opts


def render_list(rows, tree: bool) -> str:
    """Pages as lines (name, title) or as an indented tree; ``(file, channel, name, title)``."""
    if tree:
        lines = tree_lines(rows)
    else:
        width = max((len(row[2]) for row in rows), default=0)
        lines = [f"{name:<{width}}  {title}" + (f"  [channel {chan}]" if chan else "")
                 for _file, chan, name, title in rows]
    return "\n".join(lines) + "\n" if lines else "no pages\n"


def tree_lines(rows) -> list[str]:
    """Indented lines of pages in tree order (``(file, channel, name, title)`` rows); a
    folder without a page of its own shows as ``segment/``. One pass, no tree built."""
    lines: list[str] = []
    previous: list[str] = []
    for _file, channel, name, title in rows:
        parts = name.split("/")
        last = len(parts) - 1
        same, limit = 0, min(len(previous), last)
        while same < limit and previous[same] == parts[same]:
            same += 1
        for depth in range(same, last):  # folders not shown yet
            lines.append("  " * depth + parts[depth] + "/")
        lines.append(f"{'  ' * last}{parts[last]}  {title}"
                     + (f"  [channel {channel}]" if channel else ""))
        previous = parts
    return lines


def render_page(text: str, backlinks) -> str:
    """A page's text, then the pages linking to it (``(name, channel, title, ...)`` rows)."""
    if not backlinks:
        return text
    lines = [text if text.endswith("\n") or not text else text + "\n",
             f"\n-- linked from {len(backlinks)} page(s) --\n"]
    for row in backlinks:
        where = f" [channel {row[1]}]" if row[1] else ""
        lines.append(f"{row[0]}  {row[2]}{where}\n")
    return "".join(lines)


def read_page_fast(app, name: str, channel: str | None) -> str | None:
    """The rendered page and its backlinks, or None when click must answer."""
    import os

    from minarad.wiki.linktable import LinkTable, visible_backlinks
    from minarad.wiki.names import check_name, page_file

    if not app.is_set_up():
        return None
    app.check_channel_access(channel, app.settings.author)
    name = check_name(name)
    rel = page_file(name)
    if channel:
        own = page_file(name, channel)
        if os.path.isfile(os.path.join(app.root, *own.split("/"))):
            rel = own
    try:
        text = app.read_text(rel)
    except NotFound:
        return None
    from minarad.git.refs import find_git_dir

    table = LinkTable(app.root, find_git_dir(app.root))
    try:
        if not table.is_current():
            return None
        rows = visible_backlinks(table, name, (channel or "") if rel != page_file(name) else "",
                                 channel)
    finally:
        table.close()
    return render_page(text, rows)


def list_pages_fast(app, prefix: str, tree: bool, channel: str | None) -> str | None:
    """The rendered page list, or None when click must answer."""
    from minarad.git.refs import find_git_dir
    from minarad.wiki.linktable import LinkTable, visible_pages
    from minarad.wiki.names import check_name

    if not app.is_set_up():
        return None
    if channel:
        from minarad.workspace.paths import validate_channel

        validate_channel(channel)
        app.check_channel_access(channel, app.settings.author)
    prefix = check_name(prefix) if prefix else ""
    table = LinkTable(app.root, find_git_dir(app.root))
    try:
        if not table.is_current():
            return None
        return render_list(visible_pages(table, channel, prefix), tree)
    finally:
        table.close()


def try_fast_wiki_get(args: list[str]) -> int | None:
    """Answer a plain ``wiki get`` or ``wiki list`` and return its exit code, else None."""
    opts = parse_fast_wiki_get(args)
    listing = parse_fast_wiki_list(args) if opts is None else None
    if opts is None and listing is None:
        return None
    from minarad.app import Minara

    try:
        if listing is not None:
            app = Minara.open(workspace=listing.get("workspace"), author=listing.get("author"))
            out = list_pages_fast(app, listing["prefix"], listing["tree"],
                                  listing.get("channel"))
        else:
            assert opts is not None
            app = Minara.open(workspace=opts.get("workspace"), author=opts.get("author"))
            out = read_page_fast(app, opts["page"], opts.get("channel"))
    except MinaraError as err:
        sys.stderr.write(f"minara: error: {err.message}\n")
        return err.exit_code
    except Exception:  # noqa: BLE001 - anything unusual: click answers, and reports it
        return None
    if out is None:
        return None
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0
