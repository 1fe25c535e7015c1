"""``minara mcp`` on stdio answers every line that is not a message, and keeps serving."""

from __future__ import annotations

import json
import os
import subprocess

from tests.conftest import MINARA
from tests.mcp.conftest import TIMEOUT

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}}


def _line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _call(request_id: int, text: str) -> bytes:
    return _line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                  "params": {"name": "memory_append",
                             "arguments": {"file": "MEMORY.md", "text": text}}})


def test_bad_lines_get_json_rpc_errors_and_nothing_is_stored(mcp_env, ws):
    from minarad.mcp.stdio import MAX_LINE

    huge = b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"p": "' + \
        b"x" * (MAX_LINE + 10) + b'"}}\n'
    lines = [
        _line(INIT),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        b"this is not json\n",
        _call(2, "caf\xe9").replace(b"caf\\u00e9", b"caf\xe9"),  # Latin-1: not UTF-8
        _call(3, "x\ud800y"),                                      # a lone surrogate
        huge,
        _call(4, "- kept after the bad lines"),
    ]
    proc = subprocess.Popen([MINARA, "mcp", "--as", "raw"], env=mcp_env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=os.path.dirname(mcp_env["MINARA_WORKSPACE_DIR"]))
    replies = _converse(proc, lines, until_id=4)
    errors = [r["error"] for r in replies if "error" in r]
    assert [(e["code"]) for e in errors] == [-32700, -32700, -32602, -32700], replies
    assert "not JSON" in errors[0]["message"]
    assert "not valid UTF-8" in errors[1]["message"]
    assert [r["id"] for r in replies if "error" in r][2] == 3
    assert "longer than" in errors[3]["message"]
    done = [r for r in replies if r.get("id") == 4]
    assert done and not done[0]["result"].get("isError"), replies
    memory = (ws / "MEMORY.md").read_text(encoding="utf-8")
    assert "- kept after the bad lines" in memory
    assert "\ufffd" not in memory and "caf" not in memory
    proc.stdin.close()
    assert proc.wait(timeout=TIMEOUT) == 0, proc.stderr.read().decode(errors="replace")[-2000:]


def _converse(proc, lines: list[bytes], until_id: int) -> list[dict]:
    """Write ``lines`` (stdin stays open: EOF ends the session) and read replies up to one."""
    import threading

    def feed():
        for line in lines:
            proc.stdin.write(line)
            proc.stdin.flush()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    replies: list[dict] = []
    timer = threading.Timer(TIMEOUT * 4, proc.kill)
    timer.start()
    try:
        for raw in proc.stdout:
            replies.append(json.loads(raw))
            if replies[-1].get("id") == until_id:
                break
    finally:
        timer.cancel()
    writer.join(timeout=TIMEOUT)
    return replies
