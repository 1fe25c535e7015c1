"""``minara fact|policy|grant|graph`` (the agent's own memory verbs: :mod:`.agentmemory`).

Thin commands over :class:`minarad.knowledge.Knowledge` (``ctx.app.knowledge``):
each resolves its options, calls one library verb and renders the result.
"""

from __future__ import annotations

from typing import Any

import click

from minarad.cli.options import CliContext, TextCommand, emit, json_option, pass_ctx

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from minarad.knowledge.records import KnowledgeRecord
    from minarad.knowledge.changes import Change

role_option = click.option(
    "--role", metavar="ROLE",
    help="The agent's role: grants decide what it may read and write [default: general].")
confidence_option = click.option(
    "--confidence", metavar="C", help="0.00 to 1.00 in steps of 0.05 (0.8, 0.85, ...).")


def short_commit(commit: str | None) -> str:
    return commit[:10] if commit else "no change"


def _warn_problems(problems: Iterable[object]) -> None:
    for problem in problems:
        click.echo(f"minara: warning: {problem} (skipped)", err=True)


def knowledge_line(record: KnowledgeRecord) -> str:
    from minarad.knowledge.fields import record_line

    return record_line(record.to_dict())


def _show(record: KnowledgeRecord) -> str:
    fields = record.to_dict()
    content = fields.pop("content")
    return "\n".join(f"{k}: {v}" for k, v in fields.items() if v not in ("", None)) \
        + "\n\n" + content


def _render_change(ctx: CliContext, change: Change, verb: str) -> None:
    record = change.record
    text = (f"{verb} {record.kind} {record.id} in {record.domain} "
            f"(commit {short_commit(change.commit)})")
    if change.previous is not None and change.previous.id != record.id:
        text += f"; supersedes {change.previous.id}"
    emit(ctx, change.to_dict(), text)


def text_option(ctx: CliContext, value: str | None) -> str | None:
    from minarad.cli.options import read_text_arg

    return None if value is None else read_text_arg(value, ctx.settings.max_file_bytes)


# -- facts ---------------------------------------------------------------------------------------


@click.group()
def fact() -> None:
    """Facts the agent learned: propose, list, supersede, edit, delete, search.

    A fact is knowledge/<domain>/facts/<id>.md (front matter + content),
    versioned like every file.
    """


@fact.command("propose")
@click.option("--domain", required=True, help="The domain (a folder under knowledge/).")
@click.option("--topic", required=True, help="A short label.")
@click.option("--content", required=True,
              help="The fact ('-' reads stdin, '@path' a file).")
@confidence_option
@click.option("--scope", default="workspace", show_default=True,
              help="workspace, or repo:NAME for one repository.")
@role_option
@click.option("--session", metavar="ID", help="The session it was learned in.")
@json_option
@pass_ctx
def fact_propose(ctx: CliContext, domain: str, topic: str, content: str, confidence: str | None,
                 scope: str, role: str | None, session: str | None) -> None:
    """Record a new fact: one commit by the agent (--as).

    Example: minara fact propose --domain infra --topic deploys --content "Deploys happen on Tuesdays." --confidence 0.8 --as agent-a
    """  # noqa: E501
    change = ctx.app.knowledge.propose_fact(
        domain=domain, topic=topic, content=text_option(ctx, content),
        confidence=0.8 if confidence is None else confidence, scope=scope, author=ctx.author,
        role=role, session=session)
    _render_change(ctx, change, "proposed")


@fact.command("list")
@click.option("--domain", help="Only this domain.")
@click.option("--scope", help="Only this scope (workspace, repo:NAME).")
@click.option("--sort", type=click.Choice(["newest", "confidence"]), default="newest",
              show_default=True)
@click.option("--superseded", is_flag=True, help="Show superseded facts too.")
@click.option("--limit", type=click.IntRange(min=0), default=50, show_default=True,
              help="At most this many (0: all).")
@role_option
@json_option
@pass_ctx
def fact_list(ctx: CliContext, domain: str | None, scope: str | None, sort: str, superseded: bool,
              limit: int, role: str | None) -> None:
    """List facts (superseded ones hidden) and count the current ones.

    Example: minara fact list --domain infra --sort confidence
    """
    from minarad.cli.factlist import listing as catalogue_listing
    from minarad.cli.factlist import render

    found = catalogue_listing(ctx.app, {"domain": domain, "scope": scope, "sort": sort,
                                        "superseded": superseded, "role": role,
                                        "limit": str(limit)})
    if found is not None:  # the catalogue is at HEAD: one query, no dulwich
        rows, count, problems = found
        _warn_problems(f"{path}:{line}: {message}" for path, line, message in problems)
        click.echo(render(rows, count, problems, ctx.as_json), nl=False)
        return
    listing = ctx.app.knowledge.list_facts(domain=domain, scope=scope, sort=sort,
                                           superseded=superseded, role=role,
                                           limit=limit or None)
    _warn_problems(listing.problems)
    from minarad.knowledge.fields import count_line

    lines = [knowledge_line(r) for r in listing.records]
    lines.append(count_line(listing.count, len(listing.records)))
    emit(ctx, listing.to_dict(), "\n".join(lines))


def _show_command(group: click.Group, kind: str) -> click.Command:
    @group.command("show")
    @click.argument("record_id", metavar="ID")
    @role_option
    @json_option
    @pass_ctx
    def show(ctx: CliContext, record_id: str, role: str | None) -> None:
        record = ctx.app.knowledge.get(record_id, role=role)
        emit(ctx, record.to_dict(), _show(record))

    show.help = (f"Print one {kind}: its fields and content.\n\n"
                 f"Example: minara {kind} show {kind[0]}-01JDQ4V7Y8S0M3K2ZC1W5T9B6E")
    return show


_show_command(fact, "fact")


def _supersede_command(group: click.Group, kind: str) -> click.Command:
    @group.command("supersede")
    @click.argument("record_id", metavar="ID")
    @click.option("--content", required=True, help="The new content ('-' reads stdin).")
    @click.option("--topic", help="A new topic (default: the old one).")
    @role_option
    @json_option
    @pass_ctx
    def supersede(ctx: CliContext, record_id: str, content: str, topic: str | None,
                  role: str | None, **extra: Any) -> None:
        change = ctx.app.knowledge.supersede(record_id, content=text_option(ctx, content),
                                             topic=topic,
                                             author=ctx.author, role=role, **extra)
        _render_change(ctx, change, "superseded by")

    if kind == "fact":
        supersede = confidence_option(supersede)
        supersede = click.option("--session", metavar="ID", help="The session.")(supersede)
    supersede.help = (
        f"Replace a {kind} by a new one, in ONE commit: the new {kind} 'supersedes' the "
        f"old, the old gets 'superseded_by'. Nothing is deleted.\n\n"
        f"Example: minara {kind} supersede {kind[0]}-01JDQ4V7Y8S0M3K2ZC1W5T9B6E "
        f"--content \"Deploys happen on Wednesdays.\"")
    return supersede


_supersede_command(fact, "fact")


def _edit_command(group: click.Group, kind: str) -> click.Command:
    @group.command("edit")
    @click.argument("record_id", metavar="ID")
    @click.option("--domain", help="Move it to this domain (same commit).")
    @click.option("--topic", help="A new topic.")
    @click.option("--content", help="New content ('-' reads stdin).")
    @role_option
    @json_option
    @pass_ctx
    def edit(ctx: CliContext, record_id: str, domain: str | None, topic: str | None,
             content: str | None, role: str | None, **extra: Any) -> None:
        change = ctx.app.knowledge.edit(record_id, domain=domain, topic=topic,
                                        content=text_option(ctx, content), author=ctx.author,
                                        role=role, **extra)
        _render_change(ctx, change, "edited")

    if kind == "fact":
        edit = confidence_option(edit)
        edit = click.option("--scope", help="workspace or repo:NAME.")(edit)
    edit.help = (f"Correct a {kind} in place (a person's correction); a new --domain moves "
                 f"its file in the same commit. With --role (an agent) a policy needs write."
                 f"\n\nExample: minara {kind} edit {kind[0]}-01JDQ4V7Y8S0M3K2ZC1W5T9B6E "
                 f"--domain ops")
    return edit


_edit_command(fact, "fact")


def _delete_command(group: click.Group, kind: str) -> click.Command:
    @group.command("delete")
    @click.argument("record_id", metavar="ID")
    @click.option("--yes", is_flag=True, help="Really delete it (required).")
    @click.option("--purge", is_flag=True,
                  help="Erase it from every commit instead (cannot be undone).")
    @click.option("--force", is_flag=True,
                  help="With --purge: purge even though the workspace has a remote.")
    @json_option
    @pass_ctx
    def delete(ctx: CliContext, record_id: str, yes: bool, purge: bool, force: bool) -> None:
        if not yes:
            raise click.UsageError(f"deleting a {kind} needs --yes (history keeps it; "
                                   f"superseding or deactivating is usually better)")
        if force and not purge:
            raise click.UsageError("--force goes with --purge")
        if purge:
            result = ctx.app.knowledge.purge(record_id, author=ctx.author, force=force)
            emit(ctx, result.to_dict(), f"{record_id}: purged from the whole history "
                                        f"({result.objects_removed} objects removed)")
            return
        change = ctx.app.knowledge.delete(record_id, author=ctx.author)
        _render_change(ctx, change, "deleted")

    delete.help = (f"Delete a {kind} that was wrong to record: a commit, so history keeps "
                   f"it. A {kind} it superseded becomes current again. With --purge it is "
                   f"erased from every commit instead (a leaked secret; cannot be undone; "
                   f"a workspace with a remote needs --force).\n\n"
                   f"Example: minara {kind} delete {kind[0]}-01JDQ4V7Y8S0M3K2ZC1W5T9B6E --yes")
    return delete


_delete_command(fact, "fact")


@fact.command("search", cls=TextCommand)
@click.argument("query")
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--superseded", is_flag=True, help="Include superseded facts.")
@role_option
@json_option
@pass_ctx
def fact_search(ctx: CliContext, query: str, limit: int, superseded: bool,
                role: str | None) -> None:
    """Keyword search over facts (domain, topic, content), best first.

    Example: minara fact search "deploy day"
    """
    ctx.app.ensure_set_up()
    knowledge = ctx.app.knowledge
    hits = knowledge.search_facts(query, role=role, limit=limit, superseded=superseded)
    problems = knowledge.visible_problems(role=role)
    _warn_problems(problems)
    data = [{"score": h["score"], "snippet": h["snippet"], **h["record"].to_dict()}
            for h in hits]
    text = "\n".join(f"{h['record'].id}  [{h['record'].domain} / {h['record'].topic}]  "
                     f"({h['score']:.2f})\n    {h['snippet']}" for h in hits)
    emit(ctx, {"results": data, "problems": [p.to_dict() for p in problems]},
         text or "no facts found")


# -- policies ------------------------------------------------------------------------------------


@click.group()
def policy() -> None:
    """Policies: rules the agent follows once people keep them active.

    A policy is knowledge/<domain>/policies/<id>.md. Only active ones reach
    the agent (minara context), filtered by its role's grants.
    """


@policy.command("propose")
@click.option("--domain", required=True, help="The domain.")
@click.option("--topic", required=True, help="A short label.")
@click.option("--content", required=True, help="The rule ('-' reads stdin).")
@click.option("--inactive", is_flag=True, help="Record it inactive (for review first).")
@role_option
@json_option
@pass_ctx
def policy_propose(ctx: CliContext, domain: str, topic: str, content: str, inactive: bool,
                   role: str | None) -> None:
    """Record a new policy; the role needs a write grant on the domain (else exit 5).

    Example: minara policy propose --domain infra --topic freeze --content "No deploys on Fridays." --role ops --as agent-a
    """  # noqa: E501
    change = ctx.app.knowledge.propose_policy(domain=domain, topic=topic,
                                              content=text_option(ctx, content), author=ctx.author,
                                              role=role, active=not inactive)
    _render_change(ctx, change, "proposed")


@policy.command("list")
@click.option("--domain", help="Only this domain.")
@click.option("--superseded", is_flag=True, help="Show superseded policies too.")
@role_option
@json_option
@pass_ctx
def policy_list(ctx: CliContext, domain: str | None, superseded: bool, role: str | None) -> None:
    """List policies grouped by domain, inactive ones last; count the active ones.

    Example: minara policy list --domain infra
    """
    listing = ctx.app.knowledge.list_policies(domain=domain, role=role, superseded=superseded)
    _warn_problems(listing.problems)
    lines: list[str] = []
    current = None
    for record in listing.records:
        if record.domain != current:
            current = record.domain
            lines.append(f"{'' if not lines else chr(10)}{current}:")
        lines.append("  " + knowledge_line(record))
    lines.append(f"{listing.count} active polic{'ies' if listing.count != 1 else 'y'}")
    emit(ctx, listing.to_dict("active"), "\n".join(lines))


_show_command(policy, "policy")


def _activation(name: str, active: bool) -> click.Command:
    @policy.command(name)
    @click.argument("record_id", metavar="ID")
    @json_option
    @pass_ctx
    def command(ctx: CliContext, record_id: str) -> None:
        change = ctx.app.knowledge.set_active(record_id, active, author=ctx.author)
        _render_change(ctx, change, f"{name}d" if change.commit else f"already {name}d:")

    command.help = (f"{name.capitalize()} a policy (reversible; one commit).\n\n"
                    f"Example: minara policy {name} p-01JDQ4V7Y8S0M3K2ZC1W5T9B6E")
    return command


_activation("activate", True)
_activation("deactivate", False)
_edit_command(policy, "policy")
_delete_command(policy, "policy")
_supersede_command(policy, "policy")


# -- grants --------------------------------------------------------------------------------------


@click.group()
def grant() -> None:
    """Access grants: role x domain -> none, read or write (knowledge/grants.json).

    Reads fail open (no row means read); none hides a domain from a role;
    proposing a policy needs write. An agent without a role is 'general'.
    """


@grant.command("set")
@click.argument("role")
@click.argument("domain")
@click.argument("level", type=click.Choice(["none", "read", "write"]))
@json_option
@pass_ctx
def grant_set(ctx: CliContext, role: str, domain: str, level: str) -> None:
    """Set ROLE's access to DOMAIN; one commit.

    Example: minara grant set ops infra write
    """
    commit = ctx.app.knowledge.set_grant(role, domain, level, author=ctx.author)
    emit(ctx, {"role": role, "domain": domain, "level": level, "commit": commit},
         f"{role} {level} on {domain} (commit {short_commit(commit)})")


@grant.command("list")
@json_option
@pass_ctx
def grant_list(ctx: CliContext) -> None:
    """List every grant (rows not listed mean read).

    Example: minara grant list --json
    """
    rows = ctx.app.knowledge.grants().rows()
    text = "\n".join(f"{r['role']:<16} {r['domain']:<24} {r['level']}" for r in rows)
    emit(ctx, {"grants": rows}, text or "no grants: every role may read every domain")


@grant.command("check")
@click.argument("role")
@click.argument("domain")
@json_option
@pass_ctx
def grant_check(ctx: CliContext, role: str, domain: str) -> None:
    """Print ROLE's level in DOMAIN: none, read or write.

    Example: minara grant check ops infra
    """
    level = ctx.app.knowledge.check_grant(role, domain)
    emit(ctx, {"role": role, "domain": domain, "level": level}, level)


# -- the graph -----------------------------------------------------------------------------------


@click.command("graph")
@click.option("--domain", help="Only this domain's records (and what they point to).")
@click.option("--format", "fmt", type=click.Choice(["json", "dot"]), default="json",
              show_default=True)
@role_option
@pass_ctx
def graph(ctx: CliContext, domain: str | None, fmt: str, role: str | None) -> None:
    """Print the knowledge graph: domains, topics, facts, policies, linked wiki pages.

    Edges: has_topic (domain -> topic), has (topic -> record), supersedes,
    links (a record's [[wiki]] links and mentioned record ids).

    Example: minara graph --domain infra --format dot | dot -Tsvg > infra.svg
    """
    result = ctx.app.knowledge.graph(domain=domain, role=role)
    _warn_problems(ctx.app.knowledge.visible_problems(domain=domain, role=role))
    click.echo(result.to_dot() if fmt == "dot" and not ctx.as_json else result.to_json())
