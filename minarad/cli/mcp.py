"""``minara mcp``: the agent's tools over MCP on stdio; ``minara mcp endpoint``.

The MCP SDK is imported inside the commands, never at module level.
"""

from __future__ import annotations

import click

from minarad.cli.options import CliContext, emit, json_option, pass_ctx


@click.group("mcp", invoke_without_command=True)
@click.option("--role", metavar="ROLE",
              help="The agent's role: knowledge grants decide what it may read and write "
                   "[default: general].")
@click.option("--session", metavar="ID",
              help="The session id of remembered notes [default: one per server run].")
@click.pass_context
def mcp(click_ctx: click.Context, role: str | None, session: str | None) -> None:
    """Serve the agent's memory tools over MCP on stdin/stdout.

    A harness (Claude Code, Cursor, Claude Desktop, OpenClaw...) starts
    this command and talks MCP to it: tools memory_get, memory_append,
    memory_set, memory_history, memory_search, search_memory, wiki_list,
    wiki_get, wiki_put, wiki_search, propose_fact, supersede_fact,
    propose_policy, remember, consolidate_memory, record_observation,
    update_my_notes, learn_capture, learn_use; resources
    minara://workspace/SOUL.md (AGENTS.md, IDENTITY.md, USER.md, TOOLS.md,
    MEMORY.md) with change notifications; the prompt session_context.
    Every write is a commit by the --as agent with source mcp; a channel
    whose MEMBERS.md does not name the agent is refused.

    Example: claude mcp add minara -- minara mcp --as claude
    """
    if click_ctx.invoked_subcommand is not None:
        return
    ctx = click_ctx.find_object(CliContext)
    assert ctx is not None  # the root group made it
    from minarad.mcp.library import AgentTools
    from minarad.mcp.server import serve_stdio

    tools = AgentTools(ctx.app, ctx.author, role=role, session=session)
    serve_stdio(tools, poll_s=ctx.settings.mcp_poll_ms / 1000)


@mcp.command("endpoint")
@click.option("--show-token", is_flag=True, help="Print the bearer token too.")
@json_option
@pass_ctx
def endpoint(ctx: CliContext, show_token: bool) -> None:
    """Where the daemon serves MCP over HTTP, and how to connect to it.

    The daemon serves it when mcp_http_enabled is set
    (MINARA_MCP_HTTP_ENABLED=1), on loopback, behind the HTTP gateway's
    bearer token (minara token), or MINARA_MCP_TOKEN when set.

    Example: minara mcp endpoint --show-token
    """
    from minarad.mcp.http import endpoint_url, read_endpoint, token_source

    s = ctx.settings
    store = ctx.app.existing_store()
    running = read_endpoint(store.state_dir) if store is not None else None
    url = running["url"] if running else endpoint_url(s.mcp_http_host, s.mcp_http_port)
    token = token_source(s)()
    shown = token if show_token else "<token: minara mcp endpoint --show-token>"
    data = {"url": url, "running": running is not None, "enabled": s.mcp_http_enabled,
            "token": token if show_token else None}
    text = (f"url:     {url}{'' if running else '  (not running)'}\n"
            f"header:  Authorization: Bearer {shown}\n"
            f"claude:  claude mcp add --transport http minara {url} "
            f"--header \"Authorization: Bearer {shown}\"")
    emit(ctx, data, text)
