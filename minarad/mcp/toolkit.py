"""What every group of MCP tools shares: argument types (the JSON schema) and error mapping.

A tool is an async function whose annotated signature is its schema; it
calls the library through :func:`run_call`, which runs the call on the
tools' worker thread and turns a library error into a tool error whose text
is the error's JSON (``{"error": code, "message": ...}``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from minarad.errors import MinaraError
from minarad.mcp.library import AgentTools

#: The headers an HTTP client may use to name the agent writing and its role
#: (default: the daemon's author setting, role general).
AGENT_HEADER = "x-minara-agent"
ROLE_HEADER = "x-minara-role"

File = Annotated[str, Field(description="A workspace path, e.g. MEMORY.md, USER.md, "
                                        "memory/2026-11-29-s1.md")]
Channel = Annotated[str | None, Field(description="A conversation id: MEMORY.md then means "
                                                  "channels/<id>/MEMORY.md")]
Text = Annotated[str, Field(description="UTF-8 Markdown text")]
Query = Annotated[str, Field(description='Words, "a phrase", +required, -excluded, '
                                         "kind:lesson, path:wiki/x")]
Kinds = Annotated[list[str] | None, Field(description="Only these kinds, e.g. [\"memory\", "
                                                      "\"journal\", \"lesson\", \"wiki\"]")]
Since = Annotated[str | None, Field(description="Changed since: 2026-01-31, 7d or 12h")]
Limit = Annotated[int, Field(ge=1, le=100, description="How many results (1-100)")]
Redact = Annotated[bool, Field(description=(
    "If the text holds a credential (an API key, a token, a private key...), write it with "
    "each value replaced by [REDACTED:<rule>] instead of failing with secret_detected"))]
Mode = Annotated[str | None, Field(description=(
    "keyword (words), semantic (meaning; needs an embedding model: minara models install) or "
    "hybrid (words, meaning, recency and links). Default: hybrid when a model is installed "
    "and has embedded the workspace, else keyword"))]


def tool_error(err: MinaraError) -> ToolError:
    """The tool error for a library error: its JSON as text."""
    return ToolError(json.dumps(err.to_dict(), ensure_ascii=False, default=str))


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
        raise tool_error(err) from None


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
