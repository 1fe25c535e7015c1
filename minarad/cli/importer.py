"""``minara import openclaw``: copy an OpenClaw workspace into this one."""

from __future__ import annotations

import click

from minarad.cli.options import CliContext, emit, json_option, pass_ctx


@click.group("import")
def import_() -> None:
    """Bring files from another agent-memory layout into the workspace."""


@import_.command()
@click.argument("src", required=False, metavar="[SRC]")
@click.option("--dry-run", is_flag=True, help="Say what would be copied; change nothing.")
@json_option
@pass_ctx
def openclaw(ctx: CliContext, src: str | None, dry_run: bool) -> None:
    """Copy an OpenClaw workspace (default ~/.openclaw/workspace) into this one.

    Bytes are copied as they are, in one commit. BOOTSTRAP.md and
    HEARTBEAT.md are skipped, and no file that holds anything of yours is
    overwritten (a seeded template nobody edited is replaced). A file over
    the size limit or ignored by .gitignore is skipped; a FIFO, socket or
    device stops the import (not_a_file), and a failure part-way undoes the
    whole copy.

    Example: minara import openclaw ~/.openclaw/workspace
    """
    from minarad.store.importing import import_planned
    from minarad.workspace.openclaw import DEFAULT_SOURCE, plan_import

    store = ctx.store()
    plan = plan_import(src or DEFAULT_SOURCE, str(store.root), store.max_file_bytes,
                       ignore=store.ignore_filter())
    commit = None if dry_run else import_planned(store, plan, author=ctx.author)
    data = {"source": plan.source, "copied": plan.copied, "skipped": plan.skipped,
            "removed": plan.removed, "commit": commit, "dry_run": dry_run}
    verb = "would copy" if dry_run else "copied"
    lines = [f"{verb} {p}" for p in plan.copied]
    lines += [f"skipped {p} ({why})" for p, why in sorted(plan.skipped.items())]
    lines += [f"{'would remove' if dry_run else 'removed'} {p} ({why})"
              for p, why in sorted(plan.removed.items())]
    lines.append(f"{len(plan.copied)} {verb}, {len(plan.skipped)} skipped")
    emit(ctx, data, "\n".join(lines))



@import_.command()
@click.argument("src", metavar="DIR")
@click.option("--agent", metavar="ID", help="The openboa agent (when DIR holds several).")
@click.option("--dry-run", is_flag=True, help="Say what would be added; change nothing.")
@json_option
@pass_ctx
def openboa(ctx: CliContext, src: str, agent: str | None, dry_run: bool) -> None:
    """Copy an openboa agent's learn store (and MEMORY.md) into this workspace.

    DIR is an openboa company folder (with .openboa/agents/<id>/), its
    .openboa folder or one agent's folder. Records this workspace lacks
    (by id or openboa's dedupe key) are appended byte for byte to
    learn/lessons.jsonl, corrections.jsonl and errors.jsonl; broken lines
    are reported and skipped. The agent's workspace MEMORY.md is copied
    only when ours is still the seeded template. One commit; importing
    again adds nothing.

    Example: minara import openboa ~/company --agent alpha
    """
    from minarad.learn.importing import import_openboa

    report = import_openboa(ctx.store(), src, agent=agent, author=ctx.author, dry_run=dry_run)
    verb = "would add" if dry_run else "added"
    lines = [f"{verb} {n} record(s) to {rel}" for rel, n in report.added.items()]
    if report.duplicates:
        lines.append(f"{report.duplicates} record(s) already here")
    if report.memory_copied:
        lines.append(f"{'would copy' if dry_run else 'copied'} MEMORY.md")
    lines += [f"skipped {p}" for p in report.problems]
    lines.append(f"agent {report.agent}: {sum(report.added.values())} {verb}"
                 + (f" (commit {report.commit[:12]})" if report.commit else ""))
    emit(ctx, report.to_dict(), "\n".join(lines))
