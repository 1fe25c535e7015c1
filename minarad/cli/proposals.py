"""``minara proposals`` and ``minara compact``: job changes waiting for review."""

from __future__ import annotations

import click

from minarad.cli.options import CliContext, emit, json_option, pass_ctx

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.proposals import Proposal


def _line(p: Proposal) -> str:
    first = p.message.splitlines()[0] if p.message else ""
    return f"{p.id}  {p.created[:16]}  {p.author}  {', '.join(p.paths)}  {first}"


@click.group()
def proposals() -> None:
    """Changes a job prepared on a git branch, waiting for you to accept or reject them.

    A proposal is the branch proposals/<job>/<YYYY-MM-DD>-<n> with one
    commit on top of the workspace as it was (stock git shows it: git branch
    --list 'proposals/*'). Nothing is applied until accepted; accepting
    merges it as one commit, keeping both sides where the file moved on.

    Example: minara proposals list
    """


@proposals.command("list")
@click.option("--job", metavar="NAME", help="Only this job's proposals (compact, dream...).")
@json_option
@pass_ctx
def list_(ctx: CliContext, job: str | None) -> None:
    """List open proposals, oldest first.

    Example: minara proposals list --job compact --json
    """
    found = ctx.app.proposals.list_open(job)
    text = "\n".join(_line(p) for p in found) if found else "no open proposals"
    emit(ctx, {"proposals": [p.as_dict() for p in found], "count": len(found)}, text)


@proposals.command()
@click.argument("proposal_id", metavar="ID")
@json_option
@pass_ctx
def show(ctx: CliContext, proposal_id: str) -> None:
    """Show a proposal: who, when, why, the files, and its diff.

    Example: minara proposals show compact/2026-11-30-1
    """
    book = ctx.app.proposals
    p = book.get(proposal_id)
    diff = book.diff(p.id)
    text = (f"proposal {p.id} (branch {p.branch})\nby {p.author} at {p.created}, on "
            f"{(p.base or '')[:12]}\nfiles: {', '.join(p.paths)}\n\n{p.message}\n\n{diff}")
    emit(ctx, {**p.as_dict(), "diff": diff}, text.rstrip("\n"))


@proposals.command()
@click.argument("proposal_id", metavar="ID")
@json_option
@pass_ctx
def diff(ctx: CliContext, proposal_id: str) -> None:
    """Print a proposal's unified diff against the commit it was made on.

    Example: minara proposals diff compact/2026-11-30-1
    """
    text = ctx.app.proposals.diff(proposal_id)
    emit(ctx, {"id": proposal_id, "diff": text}, text.rstrip("\n") or "(no change)")


@proposals.command()
@click.argument("proposal_id", metavar="ID")
@json_option
@pass_ctx
def accept(ctx: CliContext, proposal_id: str) -> None:
    """Apply a proposal as one merge commit and delete its branch.

    A file that changed since the proposal was made is merged three ways;
    where lines clash, both sides' lines are kept (the workspace's first).

    Example: minara proposals accept compact/2026-11-30-1
    """
    done = ctx.app.proposals.accept(proposal_id, author=ctx.author)
    if done.commit:
        text = f"accepted {done.proposal.id}: commit {done.commit[:12]} ({', '.join(done.paths)})"
        if done.merged:
            text += f"; merged with later edits: {', '.join(done.merged)}"
    else:
        text = f"accepted {done.proposal.id}: the workspace already had its changes"
    emit(ctx, done.as_dict(), text)


@proposals.command()
@click.argument("proposal_id", metavar="ID")
@json_option
@pass_ctx
def reject(ctx: CliContext, proposal_id: str) -> None:
    """Delete a proposal's branch (its commit stays in the branch's reflog for 90 days).

    Example: minara proposals reject compact/2026-11-30-1
    """
    p = ctx.app.proposals.reject(proposal_id, author=ctx.author)
    emit(ctx, {"rejected": p.as_dict()}, f"rejected {p.id} (commit {p.commit[:12]} kept in "
                                         f"the reflog of {p.branch})")


@click.command()
@click.argument("file")
@click.option("--target", type=click.IntRange(min=1), metavar="CHARS",
              help="The size to aim for, in characters.")
@click.option("--allow-unmatched", is_flag=True,
              help="File it even if some lines have no source in the original (they are "
                   "named in the proposal).")
@click.option("--dry-run", is_flag=True, help="Ask and check, but file nothing.")
@json_option
@pass_ctx
def compact(ctx: CliContext, file: str, target: int | None, allow_unmatched: bool,
            dry_run: bool) -> None:
    """Ask the LLM for a condensed FILE and file it as a proposal to review.

    The answer is refused when it is empty, not shorter, drops a heading,
    or has lines with no source in the original. Nothing changes until you
    run 'minara proposals accept'. Needs MINARA_LLM_BASE_URL and
    MINARA_LLM_MODEL (any OpenAI-compatible endpoint).

    Example: minara compact MEMORY.md --target 8000
    """
    from minarad.proposals.compaction import compact as run

    result = run(ctx.app, file, target=target, allow_unmatched=allow_unmatched, dry_run=dry_run)
    if result.proposal is None:
        text = (f"{result.path}: {result.before_chars:,} -> {result.after_chars:,} characters "
                f"(dry run; nothing filed)\n\n{result.text}")
    else:
        text = (f"{result.path}: {result.before_chars:,} -> {result.after_chars:,} characters; "
                f"proposal {result.proposal.id} (review: minara proposals show "
                f"{result.proposal.id})")
    if result.unmatched:
        text += "\nlines with no source in the original:\n" + \
            "\n".join(f"  {u}" for u in result.unmatched)
    emit(ctx, result.as_dict(), text.rstrip("\n"))
