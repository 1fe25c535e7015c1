"""``minara learn``: capture lessons, record their uses, list, show, search, promote."""

from __future__ import annotations

import click

from minarad.cli.options import CliContext, TextCommand, emit, json_option, pass_ctx

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from minarad.learn.store import LearnEntry

KINDS = ("lesson", "correction", "error")


@click.group("learn")
def learn() -> None:
    """The learn store: lessons, corrections and errors (openboa's JSONL shape).

    Records live in learn/lessons.jsonl, learn/corrections.jsonl and
    learn/errors.jsonl; each use goes to learn/evidence.jsonl. An entry is
    promoted into MEMORY.md after 10 uses with a Wilson lower bound of at
    least 0.55 (MINARA_PROMOTE_MIN_USES, MINARA_PROMOTE_MIN_SCORE) or when
    it carries promoteToMemory.
    """


def _warn_problems(ctx: CliContext, problems: Iterable[object]) -> None:
    if problems and not ctx.as_json:
        for problem in problems:
            click.echo(f"minara: warning: {problem}", err=True)


def _line(entry: LearnEntry) -> str:
    s = entry.stats
    mark = "*" if entry.promoted else ("+" if entry.graduates else " ")
    return (f"{mark} {entry.id}  [{entry.record.kind}] {entry.record.title or entry.record.detail}"
            f"  ({s.successes}/{s.uses}, lb {s.lower_bound:.2f})")


@learn.command("add")
@click.argument("kind", type=click.Choice(KINDS))
@click.option("--title", required=True, help="One line: what was learned.")
@click.option("--detail", default="", help="The lesson itself (- for stdin, @file).")
@click.option("--tag", "tags", multiple=True, metavar="TAG", help="A label (repeatable).")
@click.option("--promote", is_flag=True, help="Set promoteToMemory: promote it at once.")
@click.option("--dedupe-key", metavar="KEY", help="Dedupe by this key (openboa's dedupeKey).")
@click.option("--session", default="", metavar="ID", help="The session it was learned in.")
@json_option
@pass_ctx
def add(ctx: CliContext, kind: str, title: str, detail: str, tags: tuple[str, ...], promote: bool,
        dedupe_key: str | None, session: str) -> None:
    """Capture a lesson, correction or error; a duplicate is not added twice.

    A duplicate has the same --dedupe-key or, without one, the same kind,
    title and detail (trimmed, any case). One commit.

    Example: minara learn add lesson --title "Re-read after write" --detail "Check the file"
    """
    from minarad.cli.options import read_text_arg

    text = read_text_arg(detail, ctx.settings.max_file_bytes) if detail else ""
    result = ctx.app.learn.capture(kind, title, text, tags=tags, promote=promote,
                                   dedupe_key=dedupe_key, session=session,
                                   author=ctx.author)
    verb = "captured" if result.created else "already known as"
    emit(ctx, result.to_dict(), f"{verb} {result.record.id}")


@learn.command("list")
@click.option("--kind", type=click.Choice(KINDS), help="Only this kind.")
@click.option("--promoted", is_flag=True, help="Only entries in MEMORY.md's promoted block.")
@click.option("--candidates", is_flag=True,
              help="Only entries that graduate but are not promoted yet.")
@json_option
@pass_ctx
def list_(ctx: CliContext, kind: str | None, promoted: bool, candidates: bool) -> None:
    """List entries, oldest first, with successes/uses and the lower bound.

    A leading * marks an entry in MEMORY.md, + one that would be promoted.

    Example: minara learn list --kind lesson --candidates
    """
    store = ctx.app.learn
    entries = store.list(kind=kind, promoted=True if promoted else None, candidates=candidates)
    problems = [str(p) for p in store.problems()]
    _warn_problems(ctx, problems)
    emit(ctx, {"entries": [e.to_dict() for e in entries], "problems": problems},
         "\n".join(_line(e) for e in entries) or "no entries")


@learn.command("show")
@click.argument("id")
@json_option
@pass_ctx
def show(ctx: CliContext, id: str) -> None:
    """Show one entry (an id or a unique start of one): record, evidence, promotion.

    Example: minara learn show 0192f0c1
    """
    entry = ctx.app.learn.show(id)
    r, s = entry.record, entry.stats
    pending = " (graduates: the next promotion adds it)" if entry.graduates \
        and not entry.promoted else ""
    text = "\n".join([
        f"{r.id}  [{r.kind}] {r.title}", *([f"  {r.detail}"] if r.detail else []),
        f"file: {r.path}:{r.line}  created {r.created_at}  session {r.session or '-'}",
        f"uses {s.uses}, successes {s.successes}, success rate {s.success_rate:.2f}, "
        f"lower bound {s.lower_bound:.3f}  ({entry.reason})",
        f"promoted: {'in MEMORY.md' if entry.promoted else 'no'}{pending}"
        + (f" (since commit {entry.promoted_by[:12]})" if entry.promoted_by else "")])
    emit(ctx, entry.to_dict(), text)


@learn.command("use")
@click.argument("id")
@click.option("--outcome", required=True, type=click.Choice(("success", "failure")),
              help="Whether applying the entry worked.")
@click.option("--session", default="", metavar="ID", help="The session that used it.")
@click.option("--note", default="", help="A short note kept with the use.")
@json_option
@pass_ctx
def use(ctx: CliContext, id: str, outcome: str, session: str, note: str) -> None:
    """Record one use of an entry in learn/evidence.jsonl (one commit).

    Example: minara learn use 0192f0c1 --outcome success --session s-42
    """
    result = ctx.app.learn.use(id, outcome, session=session, note=note, author=ctx.author)
    s = result.entry.stats
    emit(ctx, result.to_dict(), f"{result.entry.id}: {outcome}; {s.successes}/{s.uses}, "
                                f"lower bound {s.lower_bound:.3f}")


@learn.command("search", cls=TextCommand)
@click.argument("query", nargs=-1, required=True)
@click.option("--kind", type=click.Choice(KINDS), multiple=True, help="Only this kind.")
@click.option("--limit", "-n", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="How many results.")
@json_option
@pass_ctx
def search(ctx: CliContext, query: tuple[str, ...], kind: tuple[str, ...], limit: int) -> None:
    """Search lessons, corrections and errors (the search index's learn entries).

    Same query language as `minara search`; an entry's uses and lower
    bound are searchable words (uses:12 is not a filter).

    Example: minara learn search retrieval reread
    """
    from minarad.cli.search import run_search

    run_search(ctx, " ".join(query), memory_only=False, kind=kind or KINDS, path="learn",
               channel=None, since=None, limit=limit, no_catch_up=False)


@learn.command("promote")
@click.option("--dry-run", is_flag=True, help="Show candidates and what would change.")
@click.option("--adopt", is_flag=True,
              help="Take over a block a person edited (its text stays in history).")
@json_option
@pass_ctx
def promote(ctx: CliContext, dry_run: bool, adopt: bool) -> None:
    """Bring MEMORY.md's promoted-learnings block in line with the evidence.

    Candidates are listed with uses, successes and lower bound. Only the
    block between the markers changes, in one commit by job:promote; a
    block someone edited is left alone until --adopt.

    Example: minara learn promote --dry-run
    """
    from minarad.jobs import run_job

    run = run_job(ctx.app, "promote", dry_run=dry_run, adopt=adopt)
    details = run.details
    lines = [f"{'*' if c['promoted'] else '+'} {c['id']}  [{c['kind']}] {c['title']}  "
             f"uses {c['stats']['uses']}, successes {c['stats']['successes']}, "
             f"lower bound {c['stats']['lower_bound']:.3f}" for c in details["candidates"]]
    lines += [f"{'would add' if dry_run else 'added'} {i}" for i in details["added"]]
    lines += [f"{'would remove' if dry_run else 'removed'} {i}" for i in details["removed"]]
    lines += [f"{'would drop' if dry_run else 'dropped'} hand-written line {t}"
              for t in details["dropped"]]
    if run.attention:
        lines.append(f"note: {run.attention}")
    lines.append(run.summary + (f" (commit {run.commit[:12]})" if run.commit else ""))
    _warn_problems(ctx, details["problems"])
    emit(ctx, run.to_dict(), "\n".join(lines))
