"""``minara search``, ``minara memory search`` and ``minara index rebuild/status``.

tantivy is imported inside the commands (via :mod:`minarad.index`), never at
module level, so that registering these commands costs nothing.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from minarad.cli.options import F
    from minarad.index.results import CatchUpStats, IndexStatus
    from click._termui_impl import ProgressBar

from minarad.cli.options import CliContext, TextCommand, emit, json_option, pass_ctx
from minarad.cli.searchtext import (HIGHLIGHT_OFF, HIGHLIGHT_ON, PLAIN_MARK,  # noqa: F401
                                    explain_text, lag_note, render_hit, render_hits,
                                    search_json)
from minarad.cli.searchtext import lag_text as _lag_text

from minarad.verbs.search import WRITER_WAIT_SECONDS


class SearchCommand(TextCommand):
    """A search command: ``-word`` is an exclusion, but ``--word`` must be an option.

    An unknown ``--option`` (``--limti 5``) is a usage error naming the
    closest option, never query text.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        names = sorted({name for param in self.get_params(ctx) if isinstance(param, click.Option)
                        for name in (*param.opts, *param.secondary_opts)
                        if name.startswith("--")})
        for arg in args:
            if arg == "--":
                break
            name = arg.split("=", 1)[0]
            if name.startswith("--") and len(name) > 2 and name not in names:
                raise click.NoSuchOption(name, possibilities=_closest(name, names), ctx=ctx)
        return super().parse_args(ctx, args)


def _closest(name: str, names: list[str]) -> list[str]:
    import difflib

    return difflib.get_close_matches(name, names, n=1, cutoff=0.5) or names[:0]


def search_options(f: F) -> F:
    """The filters shared by ``search`` and ``memory search``."""
    options = [
        click.option("--kind", "kind", multiple=True, metavar="KIND",
                     help="lesson, correction, error, wiki, journal, memory... (repeatable)."),
        click.option("--path", "path", metavar="PREFIX",
                     help="Only under this path (wiki/handbook)."),
        click.option("--channel", metavar="ID", help="Include this channel's files."),
        click.option("--role", metavar="ROLE",
                     help="Search as this agent role: knowledge domains whose grant for "
                          "it is none give no hits (default: general)."),
        click.option("--since", metavar="WHEN",
                     help="Changed since WHEN: a date (YYYY-MM-DD), 7d, 12h."),
        click.option("--until", metavar="WHEN",
                     help="Changed until WHEN: a date (YYYY-MM-DD), 7d, 12h."),
        click.option("--mode", type=click.Choice(["keyword", "semantic", "hybrid"]),
                     help="Default: hybrid when an embedding model is installed, else keyword."),
        click.option("--per-page", "per_page", type=click.IntRange(0, 1000), metavar="N",
                     help="At most N sections of each page (default 2; 0: no limit)."),
        click.option("--pages", is_flag=True, help="One hit per page (--per-page 1)."),
        click.option("--explain", is_flag=True,
                     help="Show each voice's rank and score for each hit."),
        click.option("--limit", "-n", type=click.IntRange(1, 1000), default=10, show_default=True,
                     help="How many pages (each with its best sections)."),
        click.option("--no-catch-up", "no_catch_up", is_flag=True,
                     help="Search the index as it is, without catching up with HEAD first."),
        json_option,
    ]
    for option in reversed(options):
        f = option(f)
    return f


@click.command("search", cls=SearchCommand)
@click.argument("query", nargs=-1, required=True)
@search_options
@pass_ctx
def search(ctx: CliContext, query: tuple[str, ...], **filters: Any) -> None:
    """Search the whole workspace: ranked sections with highlighted snippets.

    QUERY: words (pages with more of them rank higher), "a phrase",
    +required, -excluded, kind:lesson, path:wiki/handbook. A question
    in plain language ranks by its meaningful words ("how", "a", "어떻게"
    are left out). Korean, Japanese and Chinese words match with a
    particle or ending too (가상메모리를 finds 가상메모리와); quoted, only
    exactly. --limit counts pages, each with its best 2 sections
    under it (--per-page N, --pages). With an embedding model (minara models install) the
    search is hybrid: words, meaning, recency and links. Channel files
    show only with --channel ID. Facts and policies of a knowledge
    domain whose grant for --role (default general) is none never show.
    If another process is updating the index, the search waits for it
    up to 2.5 s.

    Example: minara search how do we roll back a migration --explain
    """
    run_search(ctx, " ".join(query), memory_only=False, **filters)


@click.command("search", cls=SearchCommand)
@click.argument("query", nargs=-1, required=True)
@search_options
@pass_ctx
def memory_search(ctx: CliContext, query: tuple[str, ...], **filters: Any) -> None:
    """Search memory files: MEMORY.md, journals, channel memory, learn store.

    Same query language as `minara search`.

    Example: minara memory search "short answers" --channel c1
    """
    run_search(ctx, " ".join(query), memory_only=True, **filters)


def run_search(ctx: CliContext, query: str, *, memory_only: bool, kind: tuple[str, ...],
                path: str | None, channel: str | None, since: str | None, limit: int,
                no_catch_up: bool, until: str | None = None, mode: str | None = None,
                per_page: int | None = None, pages: bool = False, explain: bool = False,
                role: str | None = None) -> None:
    from minarad.errors import InvalidInput

    try:
        found = ctx.app.search(query, who=ctx.author, role=role,
                               scope="memory" if memory_only else "all", mode=mode, kinds=kind,
                               path=path, channel=channel, since=since, until=until,
                               limit=limit, per_page=1 if pages else per_page, explain=explain,
                               catch_up=not no_catch_up)
    except InvalidInput as exc:
        if exc.code != "unknown_kind":
            raise
        # an unknown --kind is a usage error (exit 2) that lists the valid kinds
        raise click.BadParameter(exc.message, param_hint="'--kind'") from None
    note = lag_note(found.stats)
    if note and not ctx.as_json:
        click.echo(note, err=True)
    if found.withheld and not ctx.as_json:
        click.echo(f"minara: warning: {found.withheld['message']}", err=True)
    if found.notice and not ctx.as_json:
        click.echo(f"minara: warning: {found.notice}", err=True)
    data = search_json(query, found.hits, found.stats)
    if found.withheld:
        data["withheld"] = found.withheld
    if found.notice:
        data["mode"], data["notice"] = found.mode, found.notice
    emit(ctx, data, render_hits(found.hits, sys.stdout.isatty()))


@click.group("index")
def index() -> None:
    """The search index: derived from git, kept outside the workspace.

    Example: minara index status
    """


@index.command("rebuild")
@json_option
@pass_ctx
def rebuild(ctx: CliContext) -> None:
    """Rebuild the index from the workspace's HEAD, from nothing (progress on a terminal).

    A damaged index is discarded; searches and the daemon also rebuild one
    by themselves when they find it.

    Example: minara index rebuild
    """
    idx = ctx.app.index
    with _progress(enabled=sys.stderr.isatty() and not ctx.as_json) as progress:
        stats = idx.rebuild(progress=progress)
    if stats.busy:
        from minarad.errors import Busy

        raise Busy("another process is writing the index; try again when it is done",
                   code="index_busy")
    emit(ctx, stats.to_dict(), _stats_text(stats))


def _stats_text(stats: CatchUpStats) -> str:
    lines = [f"indexed {stats.files_indexed} files, {stats.documents} documents "
             f"at {(stats.to_commit or '-')[:10]}"]
    lines += [f"  problem: {p}" for p in stats.problems]
    return "\n".join(lines)


class _progress:
    """A click progress bar created on the first report (the total is known then)."""

    def __init__(self, enabled: bool, label: str = "indexing"):
        self.enabled = enabled
        self.label = label
        self.done = 0
        self.bar: ProgressBar[int] | None = None

    def __enter__(self) -> _progress | None:
        return self if self.enabled else None

    def __call__(self, done: int, total: int, path: str = "") -> None:
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.done)
        self.done = done

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


@index.command("status")
@json_option
@pass_ctx
def status(ctx: CliContext) -> None:
    """Documents, indexed commit, lag behind HEAD, size on disk, problems.

    Example: minara index status --json
    """
    idx = ctx.app.index
    state = idx.status()
    embeddings = idx.embedding_status()
    emit(ctx, {**state.to_dict(), "embeddings": embeddings},
         _status_text(state) + "\n" + _embedding_text(embeddings))


def _embedding_text(e: dict) -> str:
    if e["model"] is None:
        return f"search:    keyword mode ({e['notice']})"
    coverage = "-" if e["coverage"] is None else f"{e['coverage'] * 100:.0f}%"
    return "\n".join([f"model:     {e['model']} ({e['model_path']})",
                      f"vectors:   {e['vectors']} ({coverage} of documents; "
                      f"at {(e['embedded_commit'] or '-')[:10]})",
                      f"search:    {e['default_mode']} mode"])


@index.command("embed")
@click.option("--rebuild", is_flag=True, help="Embed every section again, from nothing.")
@json_option
@pass_ctx
def embed(ctx: CliContext, rebuild: bool) -> None:
    """Embed the sections that have no vector yet (the daemon does this after each commit).

    Catches the index up with HEAD first, then embeds only the sections
    whose text changed since the last run (renamed ones keep their
    vectors). Needs an embedding model (minara models install) or an
    embeddings server (MINARA_EMBED_BASE_URL). Shows progress with the
    rate and time left (with --json: JSON lines on stderr). Work is kept as
    it goes: an interrupted run resumes where it stopped.

    Example: minara index embed
    """
    from minarad.cli.embedprogress import EmbedProgress
    from minarad.errors import Busy, MinaraError

    ctx.app.ensure_set_up()
    idx = ctx.app.index
    if not idx.model.ready:
        raise MinaraError(f"no embedding model: {idx.model.reason}", code="no_embedding_model")
    idx.catch_up(wait=WRITER_WAIT_SECONDS)
    mode = "json" if ctx.as_json else "bar" if sys.stderr.isatty() else "off"
    progress = EmbedProgress(mode)
    try:
        stats = idx.catch_up_embeddings(progress=None if mode == "off" else progress,
                                        full=rebuild)
    finally:
        progress.close()
    if stats is None or stats.busy:
        raise Busy("another process is embedding; try again when it is done", code="embed_busy")
    emit(ctx, stats.to_dict(),
         f"embedded {stats.embedded} sections"
         + (f", {stats.titles} page titles" if stats.titles else "")
         + (f", {stats.summaries} page summaries" if stats.summaries else "")
         + f", reused {stats.reused}, removed {stats.removed}; "
         f"{stats.total} vectors ({stats.model}) at {(stats.commit or '-')[:10]}")


def _status_text(state: IndexStatus) -> str:
    lines = [f"index:     {state.path}",
             f"documents: {state.documents}",
             f"indexed:   {(state.indexed_commit or '-')[:10]}",
             f"head:      {(state.head_commit or '-')[:10]}",
             f"lag:       {_lag_text(state.lag) if state.lag != 0 else 'up to date'}",
             f"size:      {state.size_bytes / 1024:.0f} KiB",
             f"writer:    {'busy' if state.writer_busy else 'free'}"]
    for _path, problems in sorted(state.problems.items()):
        lines += [f"problem:   {p}" for p in problems]
    return "\n".join(lines)
