"""The learning tools: learn_capture and learn_use, thin over the learn store.

``learn_capture`` appends a lesson, correction or error to ``learn/*.jsonl``
(openboa's record shape; a duplicate returns the existing record),
``learn_use`` records one use of a lesson and its outcome in
``learn/evidence.jsonl``, from which promotion into MEMORY.md is scored.
Each is one commit by the agent with source ``mcp``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from minarad.mcp.library import SOURCE, AgentTools
from minarad.mcp.toolkit import ADDS, ADDS_ONCE, Redact, agent_of, run_call


def learn_capture(tools: AgentTools, kind: str, title: str, detail: str,
                  tags: list[str] | None = None) -> dict:
    """Capture a learning (a duplicate returns the existing record, ``created`` false)."""
    with tools.lock:
        result = tools.app.learn.capture(kind, title, detail, tags=tuple(tags or ()),
                                         session=tools.session, source_reason=SOURCE,
                                         author=tools.agent)
    return result.to_dict()


def learn_use(tools: AgentTools, id: str, outcome: str, note: str = "") -> dict:
    """Record one use of a learning and how it went."""
    with tools.lock:
        result = tools.app.learn.use(id, outcome, session=tools.session, note=note or "",
                                     author=tools.agent, source=SOURCE)
    return result.to_dict()


def add_learn_tools(server: MCPServer, tools: AgentTools) -> None:
    """Register the learning tools on ``server``."""

    async def capture(kind: Annotated[Literal["lesson", "correction", "error"], Field(
            description="lesson (what works), correction (a user corrected you) or error")],
            title: Annotated[str, Field(description="A short title")],
            detail: Annotated[str, Field(description="What happened and what to do next time")],
            ctx: Context, tags: Annotated[list[str] | None, Field(
                description="Optional tags", examples=[["deploy", "db"]])] = None,
            redact: Redact = False) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: learn_capture(me, kind, title, detail, tags),
                              redact=redact)

    async def use(id: Annotated[str, Field(description="The learning's id (or a unique "
                                                       "prefix of it)")],
                  outcome: Annotated[Literal["success", "failure"], Field(
                      description="How applying it went")],
                  ctx: Context, note: Annotated[str, Field(
                      description="Optional: what happened")] = "") -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: learn_use(me, id, outcome, note))

    server.add_tool(capture, name="learn_capture", annotations=ADDS_ONCE, description=(
        "Capture something learned so later sessions benefit: one line in learn/<kind>s.jsonl "
        "(a duplicate returns the existing one). Example: {\"kind\": \"lesson\", \"title\": "
        "\"run migrations first\", \"detail\": \"deploys fail when migrations run after the "
        "app starts\"}."))
    server.add_tool(use, name="learn_use", annotations=ADDS, description=(
        "Record that you applied a learning and whether it worked; lessons that keep working "
        "are promoted into MEMORY.md. Example: {\"id\": \"0193...\", \"outcome\": \"success\"}."))
