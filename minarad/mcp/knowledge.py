"""The knowledge tools: facts, policies (grant-checked), the hot tier, working memory.

Thin over :class:`minarad.knowledge.Knowledge` (``app.knowledge``): every
write is one commit by the agent with source ``mcp``; the agent's role (``--role``,
or the ``X-Minara-Role`` header over HTTP) is what grants are checked
against, so ``propose_policy`` without a write grant on the domain is refused
(``access_denied``). ``update_my_notes`` with a stale base answers the
conflict with the current notes, as ``memory_set`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from minarad.errors import VersionConflict
from minarad.mcp.library import SOURCE, AgentTools
from minarad.mcp.toolkit import ADDS, REPLACES, Redact, agent_of, run_call

Domain = Annotated[str, Field(description="A lowercase domain (letters, digits, . _ -)",
                              examples=["infra", "product", "people"])]
Topic = Annotated[str, Field(description="A short label", examples=["deploy day"])]
Content = Annotated[str, Field(description="One self-contained statement")]
Confidence = Annotated[float | None, Field(ge=0, le=1, description="0 to 1 in steps of 0.05 "
                                                                   "(default 0.7)",
                                           examples=[0.8, 0.95])]
RecordId = Annotated[str, Field(description="The id of a fact (f- and 26 letters and digits, "
                                            "as propose_fact returned it)")]
Scope = Annotated[str, Field(description=(
    "What the fact is about: workspace (everything this workspace serves) or repo:<name> "
    "(one code repository). A fact is seen by every channel; a channel-only note belongs in "
    "memory_append with channel"), examples=["workspace", "repo:minarad"])]
#: consolidate_memory takes the notes it promotes out of the hot files (history keeps
#: them) and may ask the configured LLM.
CONSOLIDATES = ToolAnnotations(read_only_hint=False, destructive_hint=True,
                               idempotent_hint=True, open_world_hint=True)
Session = Annotated[str | None, Field(description="The session id (default: this "
                                                  "connection's)")]


def propose_fact(tools: AgentTools, domain: str, topic: str, content: str,
                 confidence: float | None = None, scope: str = "workspace") -> dict:
    """Record a new fact."""
    extra = {} if confidence is None else {"confidence": confidence}
    with tools.lock:
        change = tools.app.knowledge.propose_fact(
            domain=domain, topic=topic, content=content, scope=scope, author=tools.agent,
            role=tools.role, session=tools.session, source=SOURCE, **extra)
    return change.to_dict()


def supersede_fact(tools: AgentTools, id: str, content: str | None = None,
                   topic: str | None = None, confidence: float | None = None) -> dict:
    """Replace a fact by a new one that supersedes it (nothing is deleted)."""
    with tools.lock:
        change = tools.app.knowledge.supersede(
            id, author=tools.agent, content=content, topic=topic, confidence=confidence,
            role=tools.role, session=tools.session, agent=True, source=SOURCE)
    return change.to_dict()


def propose_policy(tools: AgentTools, domain: str, topic: str, content: str) -> dict:
    """Record a new policy; the agent's role needs a write grant on the domain."""
    with tools.lock:
        change = tools.app.knowledge.propose_policy(
            domain=domain, topic=topic, content=content, author=tools.agent, role=tools.role,
            source=SOURCE)
    return change.to_dict()


def remember(tools: AgentTools, text: str, session: str | None = None) -> dict:
    """A session-scoped note in the hot tier."""
    with tools.lock:
        note = tools.app.knowledge.remember(text, session=session or tools.session,
                                            author=tools.agent, source=SOURCE)
    return {"session": note.session, "path": note.path, "text": note.text, "when": note.when}


def consolidate_memory(tools: AgentTools, session: str | None = None,
                       domain: str = "general") -> dict:
    """Promote hot notes into facts (with the LLM when one is configured)."""
    with tools.lock:
        done = tools.app.knowledge.consolidate(author=tools.agent, session=session or None,
                                               role=tools.role, domain=domain, source=SOURCE)
    return done.to_dict()


def record_observation(tools: AgentTools, text: str) -> dict:
    """A timestamped line under ``## Observations`` of the agent's NOTES.md."""
    with tools.lock:
        return tools.app.knowledge.record_observation(tools.agent, text, author=tools.agent,
                                                      source=SOURCE).to_dict()


def update_my_notes(tools: AgentTools, text: str, base: str | None = None) -> dict:
    """Replace the ``## Notes`` section of the agent's NOTES.md."""
    with tools.lock:
        try:
            result = tools.app.knowledge.update_my_notes(tools.agent, text, base=base,
                                                         author=tools.agent, source=SOURCE)
        except VersionConflict as err:
            path = f"agents/{tools.agent}/NOTES.md"
            current = tools.app.conflict_details(path, with_text=True)
            return {"conflict": True, "error": err.code, "message": err.message, "path": path,
                    "your_base": str(base), **current.to_dict(),
                    "hint": "merge and call update_my_notes again with base=current_version"}
    return {"conflict": False, **result.to_dict()}


def add_knowledge_tools(server: MCPServer, tools: AgentTools) -> None:
    """Register the knowledge tools on ``server``."""

    async def propose_fact_(domain: Domain, topic: Topic, content: Content, ctx: Context,
                            confidence: Confidence = None, scope: Scope = "workspace",
                            redact: Redact = False) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: propose_fact(me, domain, topic, content,
                                                          confidence, scope), redact=redact)

    async def supersede_fact_(id: RecordId, ctx: Context, content: Annotated[
            str | None, Field(description="The new statement (default: unchanged)")] = None,
            topic: Annotated[str | None, Field(description="A new topic")] = None,
            confidence: Confidence = None, redact: Redact = False) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: supersede_fact(me, id, content, topic,
                                                            confidence), redact=redact)

    async def propose_policy_(domain: Domain, topic: Topic, content: Content,
                              ctx: Context, redact: Redact = False) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: propose_policy(me, domain, topic, content),
                              redact=redact)

    async def remember_(text: Content, ctx: Context, session: Session = None,
                        redact: Redact = False) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: remember(me, text, session), redact=redact)

    async def consolidate_memory_(ctx: Context, session: Annotated[str | None, Field(
            description="Only this session's notes (default: every session)")] = None,
            domain: Annotated[str, Field(description="The domain of facts made from notes "
                                                     "seen in two sessions")] = "general"
            ) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: consolidate_memory(me, session, domain))

    async def record_observation_(text: Content, ctx: Context,
                                  redact: Redact = False) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        return await run_call(tools, lambda: record_observation(me, text), redact=redact)

    async def update_my_notes_(text: Annotated[str, Field(
            description="The new body of ## Notes")], ctx: Context, base: Annotated[
            int | str | None, Field(description="The NOTES.md version you read")] = None,
            redact: Redact = False) -> dict[str, Any]:
        me = agent_of(tools, ctx)
        b = None if base is None else str(base)
        return await run_call(tools, lambda: update_my_notes(me, text, b), redact=redact)

    table: list[tuple[Callable[..., Any], str, ToolAnnotations, str]] = [
        (propose_fact_, "propose_fact", ADDS, "Record a new fact (one file under "
         'knowledge/<domain>/facts/, one commit). Example: {"domain": "infra", "topic": '
         '"deploy day", "content": "Deploys happen on Tuesdays.", "confidence": 0.8}.'),
        (supersede_fact_, "supersede_fact", ADDS, "Replace a fact that changed by a new one that "
         "supersedes it (the old one is kept, marked superseded). "
         'Example: {"id": "f-01JD9Q2X7R5K3M8N4P6T0V2W1Y", "content": "Deploys happen on '
         'Wednesdays."}.'),
        (propose_policy_, "propose_policy", ADDS, "Propose a policy (a rule agents follow); "
         "needs a write grant for your role on the domain, else access_denied. "
         'Example: {"domain": "infra", "topic": "freeze", "content": "No deploys on Fridays."}.'),
        (remember_, "remember", ADDS, "Note something in this session's hot tier; notes repeated "
         "across sessions (or judged by the LLM) become facts on consolidate_memory. "
         'Example: {"text": "the CI cache is flaky"}.'),
        (consolidate_memory_, "consolidate_memory", CONSOLIDATES, "Turn hot notes into facts: "
         "with the configured LLM, or notes seen in two or more sessions. Example: {}."),
        (record_observation_, "record_observation", ADDS, "Add a timestamped line under "
         "## Observations in your agents/<you>/NOTES.md. "
         'Example: {"text": "builds are slow on Mondays"}.'),
        (update_my_notes_, "update_my_notes", REPLACES, "Replace the ## Notes section of your "
         "agents/<you>/NOTES.md (the rest is kept). A stale base returns conflict=true with "
         'the current text. Example: {"text": "- working on the release notes"}.'),
    ]
    for fn, name, hints, description in table:
        server.add_tool(fn, name=name, annotations=hints, description=description)
