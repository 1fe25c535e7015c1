"""``minara wiki``: list, get, put, search, links, rename, move, delete, history, diff, restore.

Each command resolves its options, calls one :class:`minarad.wiki.Wiki`
method and renders the result. A current ``wiki get PAGE`` and a plain
``wiki list`` are read from disk and the link table when it is at HEAD
(:mod:`minarad.cli.wikitext`: no dulwich).
"""

from __future__ import annotations

import click

from minarad.cli.options import CliContext, TextCommand, emit, json_option, pass_ctx, \
    read_text_arg

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.cli.options import F
    from minarad.wiki import Wiki
    from minarad.wiki.models import PageWrite, TreeNode


def page_channel_option(f: F) -> F:
    """``--channel ID``: the channel's pages (seen only by callers naming it)."""
    return click.option("--channel", metavar="ID",
                        help="A channel's pages: seen, and written, only with this option.")(f)


@click.group()
def wiki() -> None:
    """Wiki pages at paths, with [[links]] and backlinks; every save is a commit.

    PAGE is a path of lowercase segments such as handbook/refunds (stored
    as wiki/handbook/refunds.md); letters without case (Korean, Japanese,
    Chinese), digits, '-' and '_' are allowed. [[handbook/refunds]] or
    [[handbook/refunds|label]] in a page links to it. With --channel ID a
    page is that channel's, seen only by callers naming the channel.

    Example: minara wiki put handbook/refunds "Refunds within 30 days." --title Refunds
    """


def _wiki(ctx: CliContext) -> Wiki:
    return ctx.app.wiki


def _short(commit: str | None) -> str:
    return commit[:10] if commit else "-"


@wiki.command("list")
@click.argument("prefix", required=False, default="")
@click.option("--tree", is_flag=True, help="Show the pages as a tree of segments.")
@page_channel_option
@json_option
@pass_ctx
def list_(ctx: CliContext, prefix: str, tree: bool, channel: str | None) -> None:
    """List pages (PREFIX: that page and the pages under it).

    Example: minara wiki list handbook --tree
    """
    ctx.app.check_channel_access(channel, ctx.author)
    if tree and ctx.as_json:
        emit(ctx, {"tree": [_tree_dict(n) for n in _wiki(ctx).tree(prefix, channel=channel)]})
        return
    if ctx.as_json:
        emit(ctx, {"pages": [p.to_dict() for p in _wiki(ctx).list(prefix, channel=channel)]})
        return
    from minarad.cli.wikitext import list_pages_fast, render_list

    text = list_pages_fast(ctx.app, prefix, tree, channel)
    if text is None:
        text = render_list(_wiki(ctx).page_rows(prefix, channel=channel), tree)
    click.echo(text, nl=False)


def _tree_dict(node: TreeNode) -> dict:
    """A tree node as JSON (by hand: ``dataclasses.asdict`` is slow on 10,000 nodes)."""
    return {"segment": node.segment, "name": node.name, "title": node.title,
            "children": [_tree_dict(c) for c in node.children]}


@wiki.command()
@click.argument("page")
@click.option("--version", "version", metavar="V", help="An old version (number or blob id).")
@click.option("--no-backlinks", is_flag=True, help="Print the page alone.")
@page_channel_option
@json_option
@pass_ctx
def get(ctx: CliContext, page: str, version: str | None, no_backlinks: bool,
        channel: str | None) -> None:
    """Print PAGE, then the pages that link to it.

    Example: minara wiki get handbook/refunds --version 2
    """
    ctx.app.check_channel_access(channel, ctx.author)
    from minarad.cli.wikitext import read_page_fast, render_page

    if version is None and not no_backlinks and not ctx.as_json:
        text = read_page_fast(ctx.app, page, channel)
        if text is not None:
            click.echo(text, nl=False)
            return
    found = _wiki(ctx).get(page, version=version, channel=channel,
                           backlinks=not no_backlinks)
    emit(ctx, {**found.to_dict(), "backlinks": [b.to_dict() for b in found.backlinks]}, None)
    if not ctx.as_json:
        rows = [(b.name, b.channel, b.title) for b in found.backlinks]
        click.echo(render_page(found.text, rows), nl=False)


def _render_write(ctx: CliContext, result: PageWrite, what: str = "saved") -> None:
    where = f" [channel {result.channel}]" if result.channel else ""
    if result.changed:
        text = (f"{result.name}{where}: {what} as version {result.version} "
                f"(commit {_short(result.commit)})")
    else:
        text = f"{result.name}{where}: unchanged at version {result.version}"
    emit(ctx, result.to_dict(), text)


@wiki.command(cls=TextCommand)
@click.argument("page")
@click.argument("text")
@click.option("--title", metavar="T", help="The page's title (front matter 'title:').")
@click.option("--base", metavar="V",
              help="The version you read; refused with exit 3 (wiki_version_conflict) if "
                   "the page has moved on since, and your text is kept.")
@page_channel_option
@json_option
@pass_ctx
def put(ctx: CliContext, page: str, text: str, title: str | None, base: str | None,
        channel: str | None) -> None:
    """Create PAGE or save a new version of it from TEXT ('-' stdin, '@file').

    A TEXT without front matter keeps the page's front matter; a newline
    ends the saved text.

    Example: minara wiki put handbook/refunds @refunds.md --base 3
    """
    ctx.app.check_channel_access(channel, ctx.author)
    body = read_text_arg(text, ctx.settings.max_file_bytes)
    if body and not body.endswith("\n"):
        body += "\n"
    result = _wiki(ctx).put(page, body, title=title, base=base, channel=channel,
                            author=ctx.author, source="cli")
    _render_write(ctx, result)


@wiki.command(cls=TextCommand)
@click.argument("query")
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True,
              help="How many pages at most.")
@page_channel_option
@json_option
@pass_ctx
def search(ctx: CliContext, query: str, limit: int, channel: str | None) -> None:
    """Find pages by words, best first, with a snippet of each.

    Example: minara wiki search "refund window"
    """
    ctx.app.check_channel_access(channel, ctx.author)
    from minarad.wiki.names import page_of_file

    found = _wiki(ctx)
    hits = found.search(query, channel=channel, limit=limit)
    out, lines = [], []
    for hit in hits:
        name, page_channel = page_of_file(hit.path) or (hit.path, "")
        row = found.table.page(hit.path)
        title = row.title if row else hit.title
        out.append({**hit.to_dict(), "name": name, "channel": page_channel or None,
                    "title": title})
        lines.append(f"{name}  {title}" + (f" > {hit.heading}" if hit.heading else "")
                     + f"\n    {' '.join(hit.snippet.render().split())}")
    emit(ctx, {"query": query, "pages": out}, "\n".join(lines) or "no pages match")


@wiki.command()
@click.argument("page", required=False)
@click.option("--missing", is_flag=True, help="Every link to a page that does not exist.")
@page_channel_option
@json_option
@pass_ctx
def links(ctx: CliContext, page: str | None, missing: bool, channel: str | None) -> None:
    """List the links of PAGE (missing targets marked), or with --missing every broken link.

    Example: minara wiki links --missing
    """
    ctx.app.check_channel_access(channel, ctx.author)
    if missing == bool(page):
        raise click.UsageError("give PAGE or --missing (not both)")
    found = _wiki(ctx).missing(channel=channel) if missing else \
        _wiki(ctx).links(page, channel=channel)
    lines = [(f"{link.source}:{link.line} -> " if missing else f"line {link.line}: ")
             + link.target + ("" if link.exists else "  (missing)") for link in found]
    emit(ctx, {"page": page, "links": [link.to_dict() for link in found]},
         "\n".join(lines) or ("no missing links" if missing else "no links"))


@wiki.command()
@click.argument("page")
@click.option("--title", required=True, metavar="NEW", help="The new title.")
@click.option("--base", metavar="V", help="The version you read; refused if stale.")
@page_channel_option
@json_option
@pass_ctx
def rename(ctx: CliContext, page: str, title: str, base: str | None, channel: str | None) -> None:
    """Give PAGE a new title (its path stays; see 'move' for that).

    Example: minara wiki rename handbook/refunds --title "Refund rules"
    """
    ctx.app.check_channel_access(channel, ctx.author)
    result = _wiki(ctx).rename(page, title, base=base, channel=channel, author=ctx.author,
                               source="cli")
    _render_write(ctx, result, "retitled")


@wiki.command()
@click.argument("old")
@click.argument("new")
@click.option("--fix-links", is_flag=True,
              help="Rewrite every [[OLD...]] link to the new paths, in the same commit.")
@page_channel_option
@json_option
@pass_ctx
def move(ctx: CliContext, old: str, new: str, fix_links: bool, channel: str | None) -> None:
    """Move page OLD and every page under it to NEW, in one commit.

    Links to the old paths are left as they are (they then name missing
    pages) unless --fix-links. Moving onto an existing page is refused and
    nothing moves.

    Example: minara wiki move handbook guide --fix-links
    """
    ctx.app.check_channel_access(channel, ctx.author)
    result = _wiki(ctx).move(old, new, fix_links=fix_links, channel=channel,
                             author=ctx.author, source="cli")
    lines = [f"{o} -> {n}" for o, n in result.moved]
    if result.links_rewritten_in:
        lines.append(f"links rewritten in: {', '.join(result.links_rewritten_in)}")
    lines.append(f"(commit {_short(result.commit)})")
    emit(ctx, result.to_dict(), "\n".join(lines))


@wiki.command()
@click.argument("page")
@click.option("--base", metavar="V", help="The version you read; refused if stale.")
@click.option("--purge", is_flag=True,
              help="Erase the page from the whole history (rewrites commits; no undo).")
@click.option("--yes", is_flag=True, help="Confirm --purge.")
@click.option("--force", is_flag=True, help="Purge even though the workspace has a remote.")
@page_channel_option
@json_option
@pass_ctx
def delete(ctx: CliContext, page: str, base: str | None, purge: bool, yes: bool, force: bool,
           channel: str | None) -> None:
    """Delete PAGE in a commit (pages under it stay; 'restore' brings it back).

    With --purge --yes the page is erased from every commit instead: the
    commits that held it are rewritten, the reflogs emptied and the old
    objects removed. Refused when a remote is configured, unless --force.

    Example: minara wiki delete drafts/leak --purge --yes
    """
    ctx.app.check_channel_access(channel, ctx.author)
    if purge:
        result = _wiki(ctx).purge(page, channel=channel, yes=yes, force=force)
        emit(ctx, result.to_dict(), f"{page}: purged from the whole history "
                                    f"({result.objects_removed} objects removed; "
                                    f"HEAD is now {_short(result.head)})")
        return
    if yes or force:
        raise click.UsageError("--yes and --force go with --purge")
    result = _wiki(ctx).delete(page, base=base, channel=channel, author=ctx.author,
                               source="cli")
    _render_write(ctx, result, "deleted")


@wiki.command()
@click.argument("page")
@click.option("--limit", type=click.IntRange(min=1), help="Show at most N versions.")
@page_channel_option
@json_option
@pass_ctx
def history(ctx: CliContext, page: str, limit: int | None, channel: str | None) -> None:
    """List the versions of PAGE, newest first.

    Example: minara wiki history handbook/refunds --limit 5
    """
    ctx.app.check_channel_access(channel, ctx.author)
    entries = _wiki(ctx).history(page, channel=channel)[:limit]
    lines = [f"v{e.version:<4} {_short(e.commit)}  {e.time}  {e.author:<16} {e.source:<12} "
             f"{'(deleted) ' if e.deleted else ''}{e.message}" for e in entries]
    emit(ctx, {"page": page, "versions": [e.to_dict() for e in entries]}, "\n".join(lines))


@wiki.command()
@click.argument("page")
@click.argument("v1")
@click.argument("v2", required=False)
@page_channel_option
@json_option
@pass_ctx
def diff(ctx: CliContext, page: str, v1: str, v2: str | None, channel: str | None) -> None:
    """Show what changed in PAGE from version V1 to V2 (default: now).

    Example: minara wiki diff handbook/refunds 1 3
    """
    ctx.app.check_channel_access(channel, ctx.author)
    text = _wiki(ctx).diff(page, v1, v2, channel=channel)
    emit(ctx, {"page": page, "from": v1, "to": v2, "diff": text}, None)
    if not ctx.as_json:
        click.echo(text, nl=False)


@wiki.command()
@click.argument("page")
@click.argument("version")
@page_channel_option
@json_option
@pass_ctx
def restore(ctx: CliContext, page: str, version: str, channel: str | None) -> None:
    """Bring back version VERSION of PAGE as a new version (history is kept).

    Example: minara wiki restore handbook/refunds 2
    """
    ctx.app.check_channel_access(channel, ctx.author)
    result = _wiki(ctx).restore(page, version, channel=channel, author=ctx.author,
                                source="cli")
    _render_write(ctx, result, "restored")
