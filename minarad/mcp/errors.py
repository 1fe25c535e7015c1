"""Every MCP failure in the project's own words: tool errors as its error JSON, plain logs.

:class:`ProjectServer` is the SDK's ``MCPServer`` with two answers changed:

- a failed tool call is ``isError`` whose text is the project's error JSON
  (``{"error": code, "message": ..., "field": ...}``, the CLI's ``--json``
  and the HTTP API's shape) and whose ``structuredContent`` is the same
  object. A library error (any :class:`~minarad.errors.MinaraError`) keeps
  its code and details (and ``field``, when its code names an argument:
  ``invalid_scope`` is about ``scope``); an argument that is missing or of
  the wrong type is ``invalid_input`` naming the ``field``; an unknown tool is
  ``unknown_tool``; a crash is ``unexpected_error`` (its traceback stays in
  the server's log). The SDK's ``Error executing tool X:`` prefix and
  pydantic's text never reach the client.
- an unknown prompt, or a prompt's bad argument, is a JSON-RPC
  ``-32602`` (invalid params) error, not an internal error with a traceback.

:func:`route_sdk_logs` sends the SDK's stdlib logging to loguru, one plain
line per record, and keeps the SDK from installing its rich (box-drawn)
handler on the root logger.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent
from pydantic import ValidationError

from minarad.errors import InvalidInput, MinaraError


class ProjectToolError(ToolError):
    """A tool error carrying the library error it stands for."""

    def __init__(self, error: MinaraError):
        super().__init__(error.message)
        self.error = error


def error_body(exc: BaseException, tool: str) -> dict[str, Any]:
    """The project's error JSON for a failed call of ``tool``."""
    return project_error(exc, tool).to_dict()


def project_error(exc: BaseException, tool: str) -> MinaraError:
    """The library error a tool failure stands for (see the module's docstring)."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ProjectToolError):
            return cause.error
        if isinstance(cause, MinaraError):
            return cause
        if isinstance(cause, ValidationError):
            return argument_error(cause, tool)
        cause = cause.__cause__
    if isinstance(exc, UnexpectedToolError):
        return MinaraError(f"unexpected error in tool {tool} (please report this; the "
                           f"server's log has the details)", code="unexpected_error")
    if str(exc).startswith("Unknown tool"):
        return InvalidInput(f"unknown tool {tool!r}; tools/list names the tools",
                            code="unknown_tool", tool=tool)
    return MinaraError(str(exc), code="tool_error")


def argument_error(exc: ValidationError, tool: str) -> InvalidInput:
    """``invalid_input`` naming the first bad argument (every one in the message)."""
    problems, fields = [], []
    for error in exc.errors(include_url=False):
        field = ".".join(str(part) for part in error.get("loc", ())) or "arguments"
        fields.append(field)
        if error.get("type") == "missing":
            problems.append(f"{field} is required")
        else:
            problems.append(f"{field}: {error.get('msg', 'invalid')}")
    top = fields[0].split(".")[0] if fields else "arguments"
    return InvalidInput(f"{tool}: {'; '.join(problems)}", code="invalid_input", field=top)


def with_field(body: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """``body`` naming the argument its code is about (``invalid_scope``: ``scope``), when
    the library did not and the call has that argument."""
    code = str(body.get("error", ""))
    for prefix in ("invalid_", "unknown_", "empty_"):
        name = code.removeprefix(prefix)
        if code.startswith(prefix) and "field" not in body and name in (arguments or {}):
            return {**body, "field": name}
    return body


def error_result(body: dict[str, Any]) -> CallToolResult:
    """The ``isError`` result: the error JSON as text and as structured content."""
    text = json.dumps(body, ensure_ascii=False, default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=json.loads(text), is_error=True)


class ProjectServer(MCPServer):
    """``MCPServer`` answering failures as the project does (see the module's docstring)."""

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError):
                from loguru import logger

                cause = exc.__cause__
                logger.error("MCP tool {} failed: {}: {}", name, type(cause).__name__,
                             " ".join(str(cause).split()))
            return error_result(with_field(error_body(exc, name), arguments))

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None,
                         context: Any = None) -> Any:
        known = [prompt.name for prompt in await self.list_prompts()]
        if name not in known:
            from loguru import logger

            logger.warning("MCP prompt {!r} refused: unknown (prompts: {})", name,
                           ", ".join(known))
            raise MCPError(code=INVALID_PARAMS, message=f"unknown prompt {name!r}; prompts: "
                           f"{', '.join(known)}", data={"error": "unknown_prompt",
                                                        "prompt": name})
        try:
            return await super().get_prompt(name, arguments, context)
        except ValueError as exc:
            error = _minara_cause(exc)
            if error is not None:
                raise MCPError(code=INVALID_PARAMS, message=error.message,
                               data=error.to_dict()) from None
            raise MCPError(code=INVALID_PARAMS, message=str(exc),
                           data={"error": "invalid_input", "message": str(exc)}) from None


def _minara_cause(exc: BaseException) -> MinaraError | None:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, MinaraError):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


class ToLoguru(logging.Handler):
    """A stdlib handler writing each record as one loguru line (no traceback, no box)."""

    def emit(self, record: logging.LogRecord) -> None:
        from loguru import logger

        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text = f"{text}: {type(exc).__name__}: {exc}"
        try:
            level: str | int = logger.level(record.levelname).name
        except ValueError:
            level = record.levelno
        logger.log(level, "{}: {}", record.name, " ".join(text.split()))


def route_sdk_logs(level: int = logging.WARNING) -> None:
    """Send the ``mcp`` loggers to loguru at ``level`` and up (once per process)."""
    sdk = logging.getLogger("mcp")
    if not any(isinstance(h, ToLoguru) for h in sdk.handlers):
        sdk.addHandler(ToLoguru())
    sdk.setLevel(level)
    sdk.propagate = False


def build_project_server(**kwargs: Any) -> ProjectServer:
    """A :class:`ProjectServer`; the root logger is left as it was (no rich handler)."""
    route_sdk_logs()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    server = ProjectServer(**kwargs)
    for handler in list(root.handlers):  # what the SDK's configure_logging added
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)
    return server
