"""What every group of MCP tools shares: argument types (the JSON schema), annotations,
errors.

A tool is an async function whose annotated signature is its schema; it
calls the library through :func:`run_call`, which runs the call on the
tools' worker thread and turns a library error into a tool error, which
:class:`~minarad.mcp.errors.ProjectServer` answers with the error's JSON
(``{"error": code, "message": ...}``) as text and structured content. The
annotations say what each kind of tool does to the workspace.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from minarad.errors import MinaraError
from minarad.mcp.errors import ProjectToolError
from minarad.mcp.library import AgentTools

#: The headers an HTTP client may use to name the agent writing and its role
#: (default: the daemon's author setting, role general).
AGENT_HEADER = "x-minara-agent"
ROLE_HEADER = "x-minara-role"

File = Annotated[str, Field(description="A workspace path", examples=[
    "MEMORY.md", "USER.md", "memory/2026-11-29-s1.md"])]
Channel = Annotated[str | None, Field(description=(
    "A channel (conversation) id: MEMORY.md then means channels/<id>/MEMORY.md; refused "
    "unless channels/<id>/MEMBERS.md names you"), examples=["team-a"])]
SearchChannel = Annotated[str | None, Field(description=(
    "A channel (conversation) id: its files (channels/<id>/...) are searched with the shared "
    "ones; without it, no channel's files are. Refused unless channels/<id>/MEMBERS.md "
    "names you"), examples=["team-a"])]
WikiChannel = Annotated[str | None, Field(description=(
    "A channel (conversation) id: its pages (channels/<id>/wiki/) join the shared wiki and "
    "hide a shared page of the same name; a page saved with it is the channel's. Refused "
    "unless channels/<id>/MEMBERS.md names you"), examples=["team-a"])]
Text = Annotated[str, Field(description="UTF-8 Markdown text")]
Query = Annotated[str, Field(description=(
    'Words (any may match), "a phrase", +required, -excluded, and the filters kind:KIND, '
    "path:PREFIX, title:WORD"), examples=[
    "deploy rollback", '"schema change"', "+deploy -staging", "kind:lesson migrations",
    "path:wiki/ops rollback"])]
WikiQuery = Annotated[str, Field(description=(
    'Words (any may match), "a phrase", +required, -excluded, title:WORD'), examples=[
    "rollback", '"schema change"', "+deploy -staging", "title:deploy"])]
Kinds = Annotated[list[str] | None, Field(description=(
    "Only these kinds (an unknown one is refused, naming the valid ones)"), examples=[
    ["memory", "journal"], ["lesson"], ["wiki"]])]
Since = Annotated[str | None, Field(description="Changed since a date, or a span back from "
                                                "now", examples=["2026-01-31", "7d", "12h"])]
Limit = Annotated[int, Field(ge=1, le=100, description="How many results (1-100)")]
Mode = Annotated[Literal["keyword", "semantic", "hybrid"] | None, Field(description=(
    "keyword (words), semantic (meaning) or hybrid (words, meaning, recency and links). "
    "semantic and hybrid need an embedding model (minara models install), else the call "
    "fails with no_embedding_model. Default: hybrid when a model is installed and has "
    "embedded the workspace, else keyword"))]
Redact = Annotated[bool, Field(description=(
    "If the text holds a credential (an API key, a token, a private key...), write it with "
    "each value replaced by [REDACTED:<rule>] instead of failing with secret_detected"))]

#: The annotations of each kind of tool (every tool works on this workspace only).
READS = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                        open_world_hint=False)
#: Adds something new (a line, a record, a note) at each call; never overwrites.
ADDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                       open_world_hint=False)
#: Adds, but a second identical call returns the first one's record.
ADDS_ONCE = ToolAnnotations(read_only_hint=False, destructive_hint=False,
                            idempotent_hint=True, open_world_hint=False)
#: Replaces what is there (history keeps the old version); the same call twice changes
#: nothing more.
REPLACES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                           open_world_hint=False)


def tool_error(err: MinaraError) -> ToolError:
    """The tool error for a library error (answered as its JSON, see :mod:`.errors`)."""
    return ProjectToolError(err)


async def run_call(tools: AgentTools, call: Callable[[], Any], *, redact: bool = False) -> Any:
    """Run a library call on the tools' worker; a library error becomes a tool error.

    With ``redact``, a credential in a text it writes is redacted instead of refused.
    """
    if redact:
        from minarad.secrets.guard import call_redacting

        plain = call

        def call() -> Any:
            return call_redacting(True, plain)
    try:
        return await tools.run(call)
    except MinaraError as err:
        raise tool_error(err) from err


def agent_of(tools: AgentTools, ctx: Context | None) -> AgentTools:
    """The tools as the agent (and role) the HTTP headers name, else as configured."""
    headers = (None if ctx is None else _headers(ctx)) or {}
    name, role = headers.get(AGENT_HEADER), headers.get(ROLE_HEADER)
    return tools.for_agent(name, role) if name or role else tools


def _headers(ctx: Context) -> Mapping[str, str] | None:
    try:
        return ctx.headers
    except (ValueError, AttributeError):  # no request (called outside one)
        return None
