"""``minara remember|consolidate|decisions|notes|channel``: the agent's own memory.

The hot tier and its consolidation into facts, meeting decisions, an
agent's working memory (``agents/<id>/NOTES.md``) and a channel's members;
thin over :class:`minarad.knowledge.Knowledge`, as :mod:`minarad.cli.knowledge`
is for facts, policies, grants and the graph.
"""

from __future__ import annotations

import click

from minarad.cli.knowledge import knowledge_line, short_commit, text_option, role_option
from minarad.cli.options import CliContext, TextCommand, emit, json_option, pass_ctx


# -- hot tier, decisions, working memory --------------------------------------------------------


@click.command("remember", cls=TextCommand)
@click.argument("text")
@click.option("--session", required=True, metavar="ID", help="The session the note belongs to.")
@json_option
@pass_ctx
def remember(ctx: CliContext, text: str, session: str) -> None:
    """Keep a session-scoped note in the hot tier (knowledge/_hot/<session>.md).

    'minara consolidate' later turns notes into facts.

    Example: minara remember "the CI cache is flaky" --session s1 --as agent-a
    """
    note = ctx.app.knowledge.remember(text_option(ctx, text) or "", session=session,
                                      author=ctx.author)
    emit(ctx, {"path": note.path, "session": note.session, "text": note.text,
               "time": note.when}, f"remembered in {note.path}")


@click.command("consolidate")
@click.option("--session", metavar="ID", help="Only this session's notes.")
@click.option("--domain", default="general", show_default=True,
              help="Domain of facts promoted without an LLM.")
@click.option("--no-llm", is_flag=True, help="Do not ask the model even if one is configured.")
@role_option
@json_option
@pass_ctx
def consolidate(ctx: CliContext, session: str | None, domain: str, no_llm: bool,
                role: str | None) -> None:
    """Promote hot notes into facts, in one commit.

    With an LLM configured (MINARA_LLM_BASE_URL, MINARA_LLM_MODEL) it
    proposes facts and supersedes contradicted ones; without one, notes
    remembered in two or more sessions become facts.

    Example: minara consolidate --session s1 --as agent-a
    """
    result = ctx.app.knowledge.consolidate(author=ctx.author, session=session, role=role,
                                           use_llm=False if no_llm else None, domain=domain)
    lines = [f"{result.mode}: {len(result.facts)} facts, {len(result.superseded)} superseded, "
             f"{result.consumed} notes consumed (commit {short_commit(result.commit)})"]
    lines += ["  " + knowledge_line(f) for f in result.facts]
    lines += [f"  skipped: {s}" for s in result.skipped]
    emit(ctx, result.to_dict(), "\n".join(lines))


@click.group()
def decisions() -> None:
    """Meeting decisions, recorded as facts in the 'decisions' domain."""


@decisions.command("ingest")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--confidence", default="0.9", show_default=True, help="Of each decision.")
@json_option
@pass_ctx
def decisions_ingest(ctx: CliContext, file: str, confidence: str) -> None:
    """Turn a meeting note's decisions into facts: the items of a '## Decisions'
    section and '- [decision] ...' lines. Already recorded ones are skipped.

    Example: minara decisions ingest notes/2026-11-30-standup.md
    """
    import os

    text = text_option(ctx, "@" + file) or ""
    name = os.path.splitext(os.path.basename(file))[0]
    result = ctx.app.knowledge.ingest_decisions(text, name=name, author=ctx.author,
                                                confidence=confidence)
    lines = [f"{len(result.facts)} decisions recorded, {len(result.skipped)} already known "
             f"(commit {short_commit(result.commit)})"]
    lines += ["  " + knowledge_line(f) for f in result.facts]
    emit(ctx, result.to_dict(), "\n".join(lines))


@click.group()
def notes() -> None:
    """An agent's working memory: agents/<id>/NOTES.md (## Notes, ## Observations).

    'minara context --agent ID' shows it to that agent.
    """


agent_option = click.option("--agent", metavar="ID",
                            help="The agent whose notes these are [default: --as].")


@notes.command("observe", cls=TextCommand)
@click.argument("text")
@agent_option
@json_option
@pass_ctx
def notes_observe(ctx: CliContext, text: str, agent: str | None) -> None:
    """Add a timestamped line under ## Observations; one commit.

    Example: minara notes observe "deploys are slow on Mondays" --as agent-a
    """
    result = ctx.app.knowledge.record_observation(agent or ctx.author, text_option(ctx, text) or "",
                                                  author=ctx.author)
    emit(ctx, result.to_dict(), f"{result.path}: version {result.version}")


@notes.command("update", cls=TextCommand)
@click.argument("text")
@click.option("--base", metavar="V",
              help="The version you read; refused with exit 3 if the file moved on.")
@agent_option
@json_option
@pass_ctx
def notes_update(ctx: CliContext, text: str, base: str | None, agent: str | None) -> None:
    """Replace the ## Notes section (and nothing else) of the agent's NOTES.md.

    Example: minara notes update "Working on the release notes." --as agent-a --base 3
    """
    result = ctx.app.knowledge.update_my_notes(agent or ctx.author, text_option(ctx, text) or "",
                                               base=base, author=ctx.author)
    emit(ctx, result.to_dict(), f"{result.path}: version {result.version}")


# -- channels ---------------------------------------------------------------------------------


@click.group()
def channel() -> None:
    """Channels: who may use a conversation's memory."""


@channel.command("members")
@click.argument("channel_id", metavar="ID")
@click.option("--add", "add", multiple=True, metavar="WHO", help="Add a member (repeatable).")
@click.option("--remove", "remove", multiple=True, metavar="WHO",
              help="Remove a member (repeatable).")
@json_option
@pass_ctx
def channel_members(ctx: CliContext, channel_id: str, add: tuple[str, ...],
                    remove: tuple[str, ...]) -> None:
    """Show or change channels/ID/MEMBERS.md. A channel without it is open to anyone
    who names it; with it, only members may use --channel ID (else exit 5).

    Example: minara channel members team-a --add dana --add agent-a
    """
    knowledge = ctx.app.knowledge
    if add or remove:
        members: list[str] | None = knowledge.change_members(channel_id, add=add, remove=remove,
                                                             author=ctx.author)
    else:
        members = knowledge.channel_members(channel_id)
    text = ("open: no MEMBERS.md, anyone who names it may use it" if members is None
            else "\n".join(members) or "no members")
    emit(ctx, {"channel": channel_id, "members": members}, text)
