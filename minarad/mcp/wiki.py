"""The wiki's tools: wiki_list, wiki_get, wiki_put, wiki_search.

Thin over :class:`minarad.wiki.Wiki` (``app.wiki``): page paths are the
wiki's names (``handbook/deploy``, lowercase segments), a channel's pages
are seen only with that channel (and refused to an agent its MEMBERS.md does
not name), and ``wiki_put`` with a stale base answers
the conflict with the page's current version and text, as ``memory_set`` does.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from minarad.errors import VersionConflict
from minarad.mcp.library import AgentTools
from minarad.mcp.toolkit import READS, REPLACES, Limit, Redact, Text, WikiChannel, WikiQuery, \
    agent_of, run_call

PagePath = Annotated[str, Field(description="A page path of lowercase segments (handbook/deploy "
                                            "is the file wiki/handbook/deploy.md)",
                                examples=["handbook/deploy"])]
Channel = WikiChannel


def wiki_list(tools: AgentTools, prefix: str = "", channel: str | None = None) -> dict:
    """The pages the caller sees (under ``prefix``)."""
    tools.check_channel(channel)
    with tools.lock:
        pages = tools.app.wiki.list(prefix or "", channel=channel or None)
    return {"pages": [p.to_dict() for p in pages]}


def wiki_get(tools: AgentTools, path: str, version: str | None = None,
             channel: str | None = None) -> dict:
    """A page now (or at ``version``) with its backlinks."""
    tools.check_channel(channel)
    with tools.lock:
        return tools.app.wiki.get(path, version=version, channel=channel or None).to_dict()


def wiki_put(tools: AgentTools, path: str, text: str, title: str | None = None,
             base: str | None = None, channel: str | None = None) -> dict:
    """Create or save a page; a stale base answers the conflict with the current page."""
    tools.check_channel(channel)
    wiki = tools.app.wiki
    with tools.lock:
        try:
            result = wiki.put(path, text, title=title, base=base, channel=channel or None,
                              author=tools.agent, source="mcp")
        except VersionConflict as err:
            page = wiki.get(path, channel=channel or None, backlinks=False)
            return {"conflict": True, "error": err.code, "message": err.message,
                    "path": page.name, "your_base": str(base),
                    "current_version": page.version, "current_author": page.author,
                    "current_time": page.time, "current_text": page.text,
                    "hint": "merge your change into current_text and call wiki_put again "
                            "with base=current_version"}
    return {"conflict": False, **result.to_dict()}


def wiki_search(tools: AgentTools, query: str, channel: str | None = None,
                limit: int = 10) -> dict:
    """Pages matching ``query``, one hit (the best section) per page."""
    tools.check_channel(channel)
    with tools.lock:
        tools.app.ensure_set_up()
        hits = tools.app.wiki.search(query, channel=channel or None, limit=limit)
    return {"query": query, "results": [h.to_dict() for h in hits]}


def add_wiki_tools(server: MCPServer, tools: AgentTools) -> None:
    """Register the wiki's tools on ``server``."""

    async def list_(ctx: Context, prefix: Annotated[str, Field(
            description="Only this page and those under it; empty for all",
            examples=["handbook"])] = "",
            channel: Channel = None) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: wiki_list(me, prefix, channel))

    async def get(path: PagePath, ctx: Context, version: Annotated[int | str | None, Field(
            description="An old version (number, blob id or sha256); omit for now",
            examples=[1])] = None,
            channel: Channel = None) -> dict[str, Any]:
        me, v = agent_of(tools, ctx), None if version is None else str(version)
        return await run_call(tools, lambda: wiki_get(me, path, v, channel))

    async def put(path: PagePath, text: Text, ctx: Context, title: Annotated[str | None, Field(
            description="The page's title (kept in its front matter)",
            examples=["Deploying"])] = None,
            base: Annotated[int | str | None, Field(
                description="The version you read; omit to save whatever is there")] = None,
            channel: Channel = None, redact: Redact = False) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        b = None if base is None else str(base)
        return await run_call(tools, lambda: wiki_put(me, path, text, title, b, channel),
                              redact=redact)

    async def search(query: WikiQuery, ctx: Context, channel: Channel = None,
                     limit: Limit = 10) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: wiki_search(me, query, channel, limit))

    server.add_tool(list_, name="wiki_list", annotations=READS, description=(
        "List wiki pages (path, title, file). Example: {\"prefix\": \"handbook\"}."))
    server.add_tool(get, name="wiki_get", annotations=READS, description=(
        "Read a wiki page: text, title, version and the pages linking to it. "
        'Example: {"path": "handbook/deploy"}.'))
    server.add_tool(put, name="wiki_put", annotations=REPLACES, description=(
        "Create or save a wiki page (one commit). Link pages with [[other/page]]. With base, a "
        "page changed since you read it is not saved: the result has conflict=true and the "
        'current text. Example: {"path": "handbook/deploy", "text": "# Deploy\\n\\nSee '
        '[[handbook/rollback]]."}.'))
    server.add_tool(search, name="wiki_search", annotations=READS, description=(
        "Search wiki pages: the best section of each page, with a snippet. "
        'Example: {"query": "rollback"}.'))
