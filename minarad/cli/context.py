"""``minara context`` and ``minara turn-end``: the two ends of an agent session."""

from __future__ import annotations

import sys

import click

from minarad.cli.options import CliContext, channel_option, emit, json_option, pass_ctx

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt

    from minarad.context import Context
    from minarad.turns.harness import HookPayload
    from minarad.turns.turn_end import TurnEndResult

HOOKS = ("claude-code",)


#: What ``context --at`` (which once meant ``--now``) says on stderr.
AT_NOTICE = ("minara: notice: context --at WHEN now time-travels (the blocks as committed at "
             "WHEN, as --as-of); for the old meaning, today's files acting as of a time, use "
             "--now TIME")
#: What ``turn-end --at`` (now ``--now``) says on stderr.
TURN_END_AT_NOTICE = "minara: notice: turn-end --at is now --now (--at goes in a later release)"


def _parse_time(value: str | None, option: str = "--now") -> dt.datetime:
    """``--now``: an ISO 8601 time (naive means local), default now."""
    import datetime as dt

    if value is None:
        return dt.datetime.now().astimezone()
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO 8601 time", param_hint=option) \
            from None
    return when.astimezone()


def _time_travel(at: str | None, as_of: str | None, now: str | None,
                 report: bool) -> str | None:
    """The WHEN of ``--at``/``--as-of`` (one name for one meaning), checked against the rest."""
    if at is not None and as_of is not None and as_of != at:
        raise click.UsageError("--at and --as-of are one option: give one WHEN")
    when = at if at is not None else as_of
    if when is not None and now is not None:
        raise click.UsageError("--now (act as of a time, reading today's files) does not go "
                               "with --at/--as-of (the files as committed then)")
    if when is not None and report:
        raise click.UsageError("--report measures today's files; it does not go with "
                               "--at/--as-of")
    if at is not None:
        click.echo(AT_NOTICE, err=True)
    return when


def _read_stdin() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    return sys.stdin.buffer.read().decode("utf-8", "replace")


def _hook_payload(hook: str | None) -> HookPayload | None:
    """Read and parse the harness's hook payload from stdin (``--hook``)."""
    if hook is None:
        return None
    from minarad.turns.harness import parse_claude_code_payload

    return parse_claude_code_payload(_read_stdin())


hook_option = click.option(
    "--hook", type=click.Choice(HOOKS), metavar="HARNESS",
    help="Read the harness's hook payload (JSON) from stdin: claude-code.")
now_option = click.option(
    "--now", "now", metavar="TIME",
    help="Act as of TIME, ISO 8601 (naive = local), reading the files as they are "
         "today; default now.")


@click.command("context")
@click.option("--session", metavar="ID", help="The agent's session id.")
@click.option("--surface", metavar="NAME", help="Where the agent runs (repl, claude-code, api).")
@channel_option
@click.option("--max-file-chars", type=click.IntRange(min=0),
              help="A file longer than this is listed by name only "
                   "[setting context_max_file_chars; default 12000].")
@click.option("--max-total-chars", type=click.IntRange(min=0),
              help="Files beyond this total are listed by name only "
                   "[setting context_max_total_chars; default 60000].")
@click.option("--report", is_flag=True,
              help="Instead of the blocks, list each file's size, estimated tokens, budget "
                   "and state (ok, near = 85%+, over = listed by name only).")
@click.option("--agent", metavar="ID",
              help="The agent's id: its working memory (agents/ID/NOTES.md) is shown, and "
                   "with --channel it must be a member [default for --channel: --as].")
@click.option("--role", metavar="ROLE",
              help="The agent's role: only policies of domains it may read are shown "
                   "[default: general].")
@click.option("--at", "at", metavar="WHEN",
              help="Time travel: the blocks as given at WHEN, from the last commit at or "
                   "before it (ISO date or time, 'yesterday', '3 days ago'), as "
                   "'memory get --at' (it once meant --now: a notice on stderr says so).")
@click.option("--as-of", "as_of", metavar="WHEN", help="The same as --at.")
@now_option
@hook_option
@json_option
@pass_ctx
def context(ctx: CliContext, session: str | None, surface: str | None, channel: str | None,
            max_file_chars: int | None, max_total_chars: int | None, report: bool, at: str | None,
            hook: str | None, agent: str | None, role: str | None, as_of: str | None,
            now: str | None) -> None:
    """Print the memory blocks of a system prompt, in order.

    Blocks: identity (SOUL.md, AGENTS.md; cacheable), policies (the active
    ones the --role may read; cacheable), memory snapshot (USER.md,
    MEMORY.md or the channel's, HEARTBEAT.md, today's and yesterday's
    journal), working memory (with --agent: agents/ID/NOTES.md), bootstrap
    (while BOOTSTRAP.md exists), and a
    one-time notice when SOUL.md changed since the last session. Workspace
    text comes before anything derived and wins over it. File text is
    verbatim except that a '<' starting a minara-block or file tag (any
    case) is written as '&lt;', so no file can fake a block. A credential
    in a file is replaced by [REDACTED:<rule>] and named on stderr (file,
    line, rule, fingerprint; never the value).

    --report lists each file against its budget instead (near: 85% or
    more; over: the agent sees it by name only).

    With --at WHEN (or --as-of WHEN), the files come from the last commit
    at or before WHEN and the journal days are WHEN's: what the agent was
    given then. --now TIME keeps today's files and acts as of TIME (its
    journal days, its session clock).

    Example: minara context --session s1 --surface repl --json

    Example: minara context --at yesterday
    """
    payload = _hook_payload(hook)
    if payload is not None:
        session, surface = session or payload.session_id, surface or hook
    ctx.app.check_channel_access(channel, agent or ctx.author)
    when = _time_travel(at, as_of, now, report)
    if when is not None:
        past, commit = ctx.app.context_at(when, channel=channel, session=session,
                                          surface=surface, max_file_chars=max_file_chars,
                                          max_total_chars=max_total_chars, agent=agent)
        emit(ctx, {**past.as_dict(), "commit": commit}, past.text())
        _note_redactions(past)
        return
    moment = _parse_time(now)
    if report:
        from minarad.budgets import render_report

        measured = ctx.app.context_report(
            now=moment, channel=channel, session=session, surface=surface,
            max_file_chars=max_file_chars, max_total_chars=max_total_chars, agent=agent,
            role=role)
        emit(ctx, measured.as_dict(), render_report(measured))
        return
    result = ctx.app.context(now=moment, channel=channel, session=session, surface=surface,
                             max_file_chars=max_file_chars, max_total_chars=max_total_chars,
                             agent=agent, role=role)
    emit(ctx, result.as_dict(), result.text())
    _note_redactions(result)


def _note_redactions(result: Context) -> None:
    """Name each credential replaced in the prompt on stderr (never the value)."""
    for line in result.redactions():
        click.echo(f"minara: note: {line} replaced by [REDACTED:...] in the context", err=True)


def _message(message_file: str | None, payload: HookPayload | None) -> str:
    """The reply: the hook payload's, ``--message-file`` (``-`` = stdin), or stdin."""
    from minarad.turns.harness import reply_of

    if payload is not None:
        return reply_of(payload)
    if message_file is None or message_file == "-":
        return _read_stdin()
    try:
        with open(message_file, "rb") as fh:
            return fh.read().decode("utf-8", "replace")
    except OSError as exc:
        from minarad.errors import NotFound

        raise NotFound(f"cannot read {message_file}: {exc.strerror}", code="input_not_found") \
            from None


def _turn_text(result: TurnEndResult) -> str:
    parts = [f"turn {result.turn} of session {result.session}"]
    if result.bootstrap_archived:
        parts.append(f"BOOTSTRAP.md archived as {result.bootstrap_archived}")
    if result.heartbeat:
        parts.append(f"HEARTBEAT.md v{result.heartbeat['version']}")
    if result.journal:
        parts.append(f"journal entry in {result.journal}")
    return "; ".join(parts)


@click.command("turn-end")
@click.option("--session", metavar="ID", help="The agent's session id (the commit author).")
@click.option("--surface", metavar="NAME", help="Where the agent runs (repl, claude-code, api).")
@click.option("--message-file", metavar="FILE",
              help="The agent's reply for this turn ('-' = stdin; default stdin).")
@click.option("--open-loop", "open_loops", metavar="TEXT", multiple=True,
              help="An open loop to carry to the next session (repeatable; replaces the list).")
@now_option
@click.option("--at", "at", metavar="TIME", hidden=True, help="The old name of --now.")
@hook_option
@json_option
@pass_ctx
def turn_end(ctx: CliContext, session: str | None, surface: str | None, message_file: str | None,
             open_loops: tuple[str, ...], now: str | None, at: str | None,
             hook: str | None) -> None:
    """Write the agent's state back at the end of a turn.

    Archives BOOTSTRAP.md when the reply ends onboarding with BOOTSTRAP_DONE
    alone on a line, rewrites HEARTBEAT.md's status (keeping ## Schedule
    byte-for-byte) and, every WORKSPACE_DAILY_LOG_INTERVAL turns, appends to
    memory/YYYY-MM-DD-<session>.md. Each write is a commit by the session.

    Example: minara turn-end --session s1 --surface repl --message-file reply.md
    """
    from minarad.turns.turn_end import TurnEnd

    if at is not None:
        click.echo(TURN_END_AT_NOTICE, err=True)
        if now is not None and now != at:
            raise click.UsageError("--at is the old name of --now: give one TIME")
    payload = _hook_payload(hook)
    session = session or (payload.session_id if payload is not None else None)
    surface = surface or hook
    if not session or not surface:
        raise click.UsageError("give --session and --surface (or --hook with its payload)")
    turn = TurnEnd(session=session, surface=surface, message=_message(message_file, payload),
                   when=_parse_time(now if now is not None else at,
                                    "--now" if now is not None else "--at"),
                   open_loops=tuple(open_loops) or None)
    result = ctx.app.turn_end(turn)
    if payload is None or ctx.as_json:
        emit(ctx, result.to_dict(), _turn_text(result))
