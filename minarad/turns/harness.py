"""Agent-harness hook payloads: what a harness tells ``context`` and ``turn-end``.

Claude Code runs a hook command with one JSON object on stdin. Every event
carries ``session_id``, ``transcript_path``, ``cwd`` and ``hook_event_name``;
``SessionStart`` adds ``source`` (``startup``, ``resume``, ``clear``,
``compact``); ``Stop`` adds ``stop_hook_active`` and, in recent versions,
``last_assistant_message``. When that field is missing, the reply is the last
assistant text in the JSONL transcript.
"""

from __future__ import annotations

import dataclasses
import json

from minarad.errors import InvalidInput

SURFACE = {"claude-code": "claude-code"}
#: How far back in a transcript to look for the last assistant text.
TRANSCRIPT_TAIL_BYTES = 4 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class HookPayload:
    """The fields minara uses from a harness hook payload.

    Attributes:
        session_id: the harness's session id.
        event: the hook event (``SessionStart``, ``Stop``, ...).
        transcript_path: the session transcript (JSONL), if any.
        message: the assistant's last reply, if the payload carries it.
        cwd: the harness's working directory.
    """

    session_id: str
    event: str
    transcript_path: str | None = None
    message: str | None = None
    cwd: str | None = None


def parse_claude_code_payload(text: str) -> HookPayload:
    """Parse a Claude Code hook payload.

    Args:
        text: the JSON object Claude Code writes to the hook's stdin.

    Raises:
        InvalidInput: not a JSON object, or no ``session_id``.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"hook payload is not JSON: {exc}", code="invalid_hook_payload") \
            from None
    if not isinstance(data, dict) or not isinstance(data.get("session_id"), str) \
            or not data["session_id"]:
        raise InvalidInput("hook payload has no session_id", code="invalid_hook_payload")
    message = data.get("last_assistant_message")
    return HookPayload(session_id=data["session_id"], event=str(data.get("hook_event_name", "")),
                       transcript_path=data.get("transcript_path") or None,
                       message=message if isinstance(message, str) else None,
                       cwd=data.get("cwd"))


def assistant_text(entry: dict) -> str | None:
    """The text of one transcript line if it is an assistant message."""
    if entry.get("type") != "assistant":
        return None
    message = entry.get("message") or {}
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"]
    return "\n".join(texts) if texts else None


def last_assistant_text(lines) -> str | None:
    """The last assistant text among JSONL transcript lines (pure)."""
    found = None
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        text = assistant_text(entry) if isinstance(entry, dict) else None
        if text:
            found = text
    return found


def read_transcript_reply(path: str) -> str | None:
    """The last assistant reply in a Claude Code transcript file, if readable."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - TRANSCRIPT_TAIL_BYTES))
            data = fh.read()
    except OSError:
        return None
    return last_assistant_text(data.decode("utf-8", "replace").splitlines())


def reply_of(payload: HookPayload) -> str:
    """The assistant's reply for a Stop payload: its field, else the transcript."""
    if payload.message is not None:
        return payload.message
    if payload.transcript_path:
        return read_transcript_reply(payload.transcript_path) or ""
    return ""
