"""What ``minara wiki get`` and ``wiki list`` print, and their reads without dulwich.

The current page is read as it is on disk, and the pages that link to it
from the link table (SQLite), when that table is at HEAD; the list is the
table's pages. When the table is behind HEAD, or the page is missing, the
functions return None and the command asks :class:`minarad.wiki.Wiki`,
which catches up (dulwich) and gives the same answer more slowly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minarad.errors import NotFound

if TYPE_CHECKING:
    from minarad.app import Minara

def render_list(rows: list, tree: bool) -> str:
    """Pages as lines (name, title) or as an indented tree; ``(file, channel, name, title)``."""
    if tree:
        lines = tree_lines(rows)
    else:
        width = max((len(row[2]) for row in rows), default=0)
        lines = [f"{name:<{width}}  {title}" + (f"  [channel {chan}]" if chan else "")
                 for _file, chan, name, title in rows]
    return "\n".join(lines) + "\n" if lines else "no pages\n"


def tree_lines(rows: list) -> list[str]:
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


def render_page(text: str, backlinks: list) -> str:
    """A page's text, then the pages linking to it (``(name, channel, title, ...)`` rows)."""
    if not backlinks:
        return text
    lines = [text if text.endswith("\n") or not text else text + "\n",
             f"\n-- linked from {len(backlinks)} page(s) --\n"]
    for row in backlinks:
        where = f" [channel {row[1]}]" if row[1] else ""
        lines.append(f"{row[0]}  {row[2]}{where}\n")
    return "".join(lines)


def read_page_fast(app: Minara, name: str, channel: str | None) -> str | None:
    """The rendered page and its backlinks, or None when the wiki must answer."""
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
    page_channel = (channel or "") if rel != page_file(name) else ""
    if warm_app():  # the daemon's app: its wiki keeps the table open between requests
        return render_page(text, visible_backlinks(app.wiki.reading_table(), name,
                                                   page_channel, channel))
    from minarad.git.refs import find_git_dir

    table = LinkTable(app.root, find_git_dir(app.root))
    try:
        if not table.is_current():
            return None
        rows = visible_backlinks(table, name, page_channel, channel)
    finally:
        table.close()
    return render_page(text, rows)


def warm_app() -> bool:
    """True while the daemon runs the command for a client of its socket (its app is
    warm: the repository is open, dulwich loaded)."""
    from minarad.cli.options import APP_PROVIDER

    return APP_PROVIDER.get() is not None


def list_pages_fast(app: Minara, prefix: str, tree: bool, channel: str | None) -> str | None:
    """The rendered page list, or None when the wiki must answer."""
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
    if warm_app():
        return render_list(visible_pages(app.wiki.reading_table(), channel, prefix), tree)
    table = LinkTable(app.root, find_git_dir(app.root))
    try:
        if not table.is_current():
            return None
        return render_list(visible_pages(table, channel, prefix), tree)
    finally:
        table.close()
