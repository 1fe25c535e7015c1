"""The REPL's slash commands as MCP prompts: ``soul``, ``identity``, ``heartbeat``, ``workspace``.

MCP harnesses show a server's prompts as slash commands (``/soul``); each
answers with the current file, read from disk through the one read path
with the rules of ``memory get`` (no symlink followed, the size limit, a
channel's ``MEMORY.md`` for its members only). ``workspace`` without a
file lists the files with their sizes and states, as ``minara workspace``.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from pydantic import Field

from minarad.errors import MinaraError
from minarad.mcp.library import AgentTools
from minarad.mcp.toolkit import agent_of

FileName = Annotated[str | None, Field(description=(
    "soul, agents, identity, user, memory, heartbeat, bootstrap or tools; omit to list them"))]
PromptChannel = Annotated[str | None, Field(description=(
    "A conversation id: memory is then channels/<id>/MEMORY.md"))]

#: The listing's last line over MCP.
MCP_HINT = "print one with /workspace FILE (or /soul, /identity, /heartbeat)"


def workspace_text(tools: AgentTools, name: str | None, channel: str | None = None) -> str:
    """The text of the workspace file ``name`` (the listing when None), as ``tools``' agent.

    Raises:
        MinaraError: an unknown name, a channel the agent is not a member of,
            or what the read path refuses (missing, symlink, too large).
    """
    from minarad.verbs.workspace_files import explained, file_named, list_files, listing_text

    channel = channel or None
    tools.check_channel(channel)
    with tools.lock:
        tools.app.ensure_set_up()
        if not name:
            return listing_text(list_files(tools.app, channel), MCP_HINT)
        rel = tools.path(file_named(name), channel)
        try:
            return tools.app.read_text(rel)
        except MinaraError as err:
            raise explained(err, rel) from None


async def _answer(tools: AgentTools, ctx: Context | None, name: str | None,
                  channel: str | None = None) -> str:
    me = agent_of(tools, ctx)
    try:
        return await tools.run(lambda: workspace_text(me, name, channel))
    except MinaraError as err:  # the message as the client shows it, the error's JSON as data
        raise MCPError(INVALID_PARAMS, err.message, err.to_dict()) from None


def add_slash_prompts(server: MCPServer, tools: AgentTools) -> None:
    """``soul``, ``identity``, ``heartbeat`` and ``workspace(file?, channel?)``."""
    async def soul(ctx: Context) -> str:
        return await _answer(tools, ctx, "soul")

    async def identity(ctx: Context) -> str:
        return await _answer(tools, ctx, "identity")

    async def heartbeat(ctx: Context) -> str:
        return await _answer(tools, ctx, "heartbeat")

    async def workspace(ctx: Context, file: FileName = None,
                        channel: PromptChannel = None) -> str:
        return await _answer(tools, ctx, file, channel)

    for fn, description in (
            (soul, "SOUL.md as it is now: the agent's persona and values (/soul)"),
            (identity, "IDENTITY.md as it is now: the agent's name and manner (/identity)"),
            (heartbeat, "HEARTBEAT.md as it is now: the note between sessions (/heartbeat)"),
            (workspace, "A workspace file by name (soul, agents, identity, user, memory, "
                        "heartbeat, bootstrap, tools) as it is now; without a file, the list "
                        "of them with sizes and states (/workspace)")):
        server.prompt(description=description)(fn)
