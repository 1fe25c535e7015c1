"""The MCP server: the agent's tools, resources and prompt, built on the official SDK.

:func:`build_server` wraps an :class:`~minarad.mcp.library.AgentTools` in an
``MCPServer``. Each tool is a thin function whose signature is its JSON
schema (with a description and an example an LLM can follow) and carries
annotations saying whether it reads, adds or replaces; a library error
becomes a tool error (``isError``) whose text and structured content are the
error's JSON (``{"error": code, "message": ...}``), and an argument that is
missing, of the wrong type or a path that climbs out of the workspace is
refused the same way (:mod:`minarad.mcp.errors`): the server keeps serving.

The same server object serves stdio (:func:`serve_stdio`) and the daemon's
streamable HTTP endpoint (:mod:`minarad.mcp.http`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any, cast

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated
from pydantic import Field

from minarad import __version__
from minarad.errors import MinaraError
from minarad.mcp.changes import ChangeFeed, resource_uri
from minarad.mcp.errors import build_project_server
from minarad.mcp.library import RESOURCE_FILES, AgentTools
from minarad.mcp.prompts import add_slash_prompts
from minarad.mcp.toolkit import ADDS, READS, REPLACES, Channel, File, Kinds, Limit, Mode, Query, \
    Redact, SearchChannel, Since, Text, agent_of, run_call

INSTRUCTIONS = """\
minara keeps this agent's memory as Markdown files in a git-versioned workspace.
Read a file with memory_get (note its version), add a line with memory_append
(never conflicts), replace a file with memory_set(base=the version you read).
Recall with search_memory. Keep durable facts with propose_fact, passing notes
with remember, your own working notes with update_my_notes. Every write is a
commit by you; nothing is lost. A text holding a credential is refused
(secret_detected); with redact=true it is written with [REDACTED:<rule>] instead."""


def add_memory_tools(server: MCPServer, tools: AgentTools) -> None:
    """memory_get, memory_append, memory_set, memory_history."""
    async def memory_get(file: File, ctx: Context, version: Annotated[
            int | str | None, Field(description="An old version: number, blob id or sha256; "
                                                "omit for now", examples=[1])] = None,
            channel: Channel = None) -> dict[str, Any]:
        me, v = agent_of(tools, ctx), None if version is None else str(version)
        return await run_call(tools, lambda: me.memory_get(file, v, channel))

    async def memory_append(file: File, text: Text, ctx: Context,
                            channel: Channel = None, redact: Redact = False) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: me.memory_append(file, text, channel),
                              redact=redact)

    async def memory_set(file: File, text: Text, base: Annotated[int | str, Field(
            description="The version you read (memory_get's version; 0 for a new file)",
            examples=[0])],
            ctx: Context, channel: Channel = None, redact: Redact = False) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: me.memory_set(file, text, str(base), channel),
                              redact=redact)

    async def memory_history(file: File, ctx: Context, limit: Limit = 20,
                             channel: Channel = None) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: me.memory_history(file, limit, channel))

    server.add_tool(memory_get, annotations=READS, description=(
        "Read a workspace file with its version. Keep the version: memory_set needs it. "
        'Example: {"file": "MEMORY.md"}; an old one: {"file": "MEMORY.md", "version": 3}.'))
    server.add_tool(memory_append, annotations=ADDS, description=(
        "Append text as new line(s) at the end of a file (created if missing); one commit, "
        'never conflicts. Example: {"file": "MEMORY.md", "text": "- prefers short answers"}.'))
    server.add_tool(memory_set, annotations=REPLACES, description=(
        "Replace a whole file, only if it is still at the version you read (base). If someone "
        "changed it since, nothing is saved and the result has conflict=true with "
        "current_version and current_text: merge and call again. Example: "
        '{"file": "notes/ana.md", "text": "# Ana\\n- prefers tea\\n", "base": 0}.'))
    server.add_tool(memory_history, annotations=READS, description=(
        "List the versions of a file, newest first: version, author, time, source, message. "
        'Example: {"file": "MEMORY.md", "limit": 5}.'))


def add_search_tools(server: MCPServer, tools: AgentTools) -> None:
    """memory_search and search_memory."""

    async def memory_search(query: Query, ctx: Context, kind: Kinds = None, path: Annotated[
            str | None, Field(description="Only under this path prefix",
                              examples=["memory/"])] = None,
            channel: SearchChannel = None, since: Since = None, limit: Limit = 10,
            mode: Mode = None) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: me.memory_search(
            query, kind=kind, path=path, channel=channel, since=since, limit=limit, mode=mode))

    async def search_memory(query: Query, ctx: Context, mode: Mode = None,
                            kind: Kinds = None, since: Since = None,
                            channel: SearchChannel = None,
                            limit: Limit = 10) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: me.search_memory(
            query, mode=mode, kind=kind, since=since, channel=channel, limit=limit))

    server.add_tool(memory_search, annotations=READS, description=(
        "Search memory files only (MEMORY.md, journals, channel memory, learned lessons): "
        "ranked sections with snippets; modes as search_memory. "
        'Example: {"query": "deploy rollback", "since": "7d"}.'))
    server.add_tool(search_memory, annotations=READS, description=(
        "Recall: search everything the agent knows (memory, journals, wiki, lessons), best "
        "first, each hit with path, heading, lines, version and a snippet. Modes: keyword "
        "(words), semantic (meaning: finds paraphrases; needs an embedding model) and hybrid "
        "(words, meaning, recency and links fused), the default when a model is installed "
        "(keyword otherwise; the result's mode says which ran). semantic and hybrid without "
        "a model fail with no_embedding_model. Knowledge domains your role may not read never "
        'show. Example: {"query": "what did we decide about the release", "mode": "keyword"}.'))


def add_resources(server: MCPServer, tools: AgentTools) -> None:
    """The identity files and MEMORY.md as ``minara://workspace/<file>``."""
    for path in RESOURCE_FILES:
        server.resource(resource_uri(path), name=path, mime_type="text/markdown",
                        description=f"The workspace's {path} as it is now")(_reader(tools, path))


def _reader(tools: AgentTools, path: str) -> Callable[[], Awaitable[str]]:
    async def read() -> str:
        try:
            return await tools.run(lambda: tools.read_resource(path))
        except MinaraError as err:
            raise ResourceError(f"{path}: {err.message}") from None
    return read


def add_prompt(server: MCPServer, tools: AgentTools) -> None:
    """``session_context``: what ``minara context`` prints."""
    async def session_context(channel: Channel = None, session: Annotated[
            str | None, Field(description="The agent's session id")] = None) -> str:
        try:
            return await tools.run(lambda: tools.session_context(channel=channel,
                                                                 session=session))
        except MinaraError as err:
            raise ValueError(err.message) from None

    server.prompt(description="The memory blocks of this agent's system prompt (identity, "
                              "user, memory, recent journal), as `minara context` gives them"
                  )(session_context)


def add_subscriptions(server: MCPServer, feed: ChangeFeed) -> None:
    """``resources/subscribe`` and ``unsubscribe`` for clients of earlier protocols."""
    from mcp.server.context import ServerRequestContext
    from mcp.types import EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams

    async def subscribe(ctx: ServerRequestContext[Any, Any],
                        params: SubscribeRequestParams) -> EmptyResult:
        feed.subscribe(str(params.uri), ctx.session)
        return EmptyResult()

    async def unsubscribe(ctx: ServerRequestContext[Any, Any],
                          params: UnsubscribeRequestParams) -> EmptyResult:
        feed.unsubscribe(str(params.uri), ctx.session)
        return EmptyResult()

    # MCPServer has no decorator for these; its low-level server takes handlers by method.
    low = server._lowlevel_server  # noqa: SLF001
    low.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
    low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)


#: Each part adds its tools here: ``"module:function"``, called as ``function(server,
#: tools)`` in this order (imported when the server is built).
TOOL_GROUPS = [
    "minarad.mcp.server:add_memory_tools",
    "minarad.mcp.server:add_search_tools",
    # -- wiki --
    "minarad.mcp.wiki:add_wiki_tools",
    # -- knowledge --
    "minarad.mcp.knowledge:add_knowledge_tools",
    # -- learn store, promotion, dreaming, scheduler --
    "minarad.mcp.learn:add_learn_tools",
]


def add_tool_groups(server: MCPServer, tools: AgentTools) -> None:
    """Register every group of :data:`TOOL_GROUPS`."""
    import importlib

    for spec in TOOL_GROUPS:
        module, attr = spec.split(":")
        getattr(importlib.import_module(module), attr)(server, tools)


def build_server(tools: AgentTools, *, poll_s: float | None = 0.5
                 ) -> tuple[MCPServer, ChangeFeed]:
    """Build the MCP server over ``tools``; return it with its change feed.

    Args:
        tools: the agent's tools on one workspace.
        poll_s: how often HEAD is looked at for resource changes (None: when woken).
    """
    bus = InMemorySubscriptionBus()

    async def publish(uri: str) -> None:
        await bus.publish(ResourceUpdated(uri=uri))

    feed = ChangeFeed(lambda: tools.run(tools.committed_blobs), lambda: tools.run(tools.head),
                      publish, poll_s)

    @contextlib.asynccontextmanager
    async def lifespan(_server: MCPServer) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as group:
            group.start_soon(feed.run)
            try:
                yield {}
            finally:
                group.cancel_scope.cancel()

    server: MCPServer = build_project_server(
        name="minara", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan,
        subscriptions=bus, log_level="WARNING")
    add_tool_groups(server, tools)
    add_resources(server, tools)
    add_prompt(server, tools)
    add_slash_prompts(server, tools)
    add_subscriptions(server, feed)
    return server, feed


def serve_stdio(tools: AgentTools, *, poll_s: float = 0.5) -> None:
    """Serve ``tools`` on stdin/stdout until the client closes them.

    What the server logs goes to stderr in the daemon's format, one line a
    record (warnings and up; everything with ``MINARA_DEBUG=1``).
    """
    from minarad.config import debug_requested
    from minarad.daemon.main import configure_logging

    configure_logging("DEBUG" if debug_requested() else "WARNING", journal=False)
    server, _feed = build_server(tools, poll_s=poll_s)
    try:
        anyio.run(_serve_stdio, server)
    finally:
        tools.close()


async def _serve_stdio(server: MCPServer) -> None:
    """The SDK's stdio loop, on pipes read and written without worker threads."""
    from mcp.server.stdio import stdio_server

    from minarad.mcp.stdio import claimed_stdio

    low = server._lowlevel_server  # noqa: SLF001 - what MCPServer.run_stdio_async runs
    with claimed_stdio() as pipes:
        # the pipes stand in for anyio's AsyncFile: the SDK only iterates, writes, flushes
        transport = stdio_server() if pipes is None else stdio_server(
            cast(Any, pipes[0]), cast(Any, pipes[1]))
        async with transport as (read, write):
            await low.run(read, write, low.create_initialization_options())
