"""Agent writes holding a credential, through every surface, with real processes.

One daemon (HTTP on loopback) serves the module's workspace; the CLI runs
through its socket and, with MINARA_NO_DAEMON=1, in its own process; MCP
runs ``minara mcp`` under the SDK's client; ``minara dream`` asks the
loopback LLM, which answers with a token. At the end, no refused or
redacted value is anywhere: ``git log -p --all``, the search index, the
daemon's log, the state and data folders, the refused-text store.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from tests.conftest import git
from tests.gateway.conftest import Gateway
from tests.mcp.conftest import error_of, payload, run, stdio_client

#: Every value a test gave to a write that had to refuse or redact it.
HIDDEN: list[str] = []


def token() -> str:
    """A fresh, format-valid, fake GitHub token (never a real key)."""
    value = "ghp_" + "".join(random.choices(string.ascii_letters + string.digits, k=36))
    HIDDEN.append(value)
    return value


@pytest.fixture(scope="module")
def gw(tmp_path_factory):
    gateway = Gateway(tmp_path_factory.mktemp("secrets")).start()
    yield gateway
    gateway.stop()


def _no_daemon(gw) -> dict:
    return {**gw.env, "MINARA_NO_DAEMON": "1"}


def _cli(gw, *args, no_daemon=False, check=None, extra=None):
    import subprocess

    from tests.conftest import MINARA

    env = {**(_no_daemon(gw) if no_daemon else gw.env), **(extra or {})}
    proc = subprocess.run([MINARA, *args], env=env, capture_output=True, text=True, timeout=120)
    if check is not None:
        assert proc.returncode == check, (proc.returncode, proc.stdout, proc.stderr)
    return proc


# -- the surfaces, each as: write(gw, path, text, redact) -> (ok, error JSON or None) ----------


def _via_cli(no_daemon: bool):
    def write(gw, path, text, redact):
        args = ["--json", "memory", "append", path, text] + (["--redact"] if redact else [])
        proc = _cli(gw, *args, no_daemon=no_daemon)
        if proc.returncode == 0:
            return True, None
        assert proc.returncode == 6, (proc.returncode, proc.stderr)
        return False, json.loads(proc.stderr)
    return write


def _via_http(gw, path, text, redact):
    body = {"text": text, **({"redact": True} if redact else {})}
    response = gw.api.post(f"/v1/workspace/append/{path}", json=body)
    if response.status_code == 200:
        return True, None
    assert response.status_code == 422, response.text
    return False, response.json()


def _via_mcp(gw, path, text, redact):
    async def session():
        async with stdio_client(gw.env, agent="claude") as client:
            args = {"file": path, "text": text, **({"redact": True} if redact else {})}
            return await client.call_tool("memory_append", args)
    result = run(session())
    return (True, payload(result)) if not result.is_error else (False, error_of(result))


SURFACES = {"cli-daemon": _via_cli(False), "cli-no-daemon": _via_cli(True),
            "http": _via_http, "mcp": _via_mcp}


@pytest.mark.parametrize("surface", SURFACES)
def test_a_write_holding_a_token_is_refused_naming_rule_line_and_fingerprint(gw, surface):
    from minarad.secrets import fingerprint

    path, value = f"memory/{surface}.md", token()
    ok, error = SURFACES[surface](gw, path, f"- deploy notes\n- the key is {value}", False)
    assert not ok
    assert error["error"] == "secret_detected"
    assert error["findings"] == [{"rule": "github-token", "line": 2, "column": 14,
                                  "fingerprint": fingerprint("github-token", value)}]
    assert "line 2" in error["message"] and "--redact" in error["message"]
    assert value not in json.dumps(error)
    assert not (gw.ws / path).exists()
    kept = Path(error["rejected_text_file"]).read_text()
    assert kept == "- deploy notes\n- the key is [REDACTED:github-token]"


@pytest.mark.parametrize("surface", SURFACES)
def test_redact_writes_the_text_with_the_value_replaced(gw, surface):
    path, value = f"memory/{surface}-redacted.md", token()
    ok, _ = SURFACES[surface](gw, path, f"- the key is {value}", True)
    assert ok
    assert (gw.ws / path).read_text() == "- the key is [REDACTED:github-token]\n"
    message = git(gw.ws, "log", "-1", "--format=%B", "--", path)
    assert "redacted 1 secret: github-token" in message


def test_every_agent_verb_is_checked(gw):
    value = token()
    verbs = [("wiki", "put", "keys", f"key {value}"),
             ("remember", f"key {value}", "--session", "s1"),
             ("fact", "propose", "--domain", "infra", "--topic", "keys",
              "--content", f"the key is {value}"),
             ("notes", "observe", f"key {value}"),
             ("learn", "add", "lesson", "--title", "keys", "--detail", f"the key is {value}")]
    head = git(gw.ws, "rev-parse", "HEAD")
    for args in verbs:
        proc = _cli(gw, *args)
        if proc.returncode == 2:  # a verb spelled otherwise here: shown, not hidden
            pytest.fail(f"minara {' '.join(args[:2])}: {proc.stderr}")
        assert proc.returncode == 6, (args[:2], proc.stdout, proc.stderr)
        assert value not in proc.stdout + proc.stderr
    assert git(gw.ws, "rev-parse", "HEAD") == head


def test_a_commit_message_holding_a_token_is_refused(gw):
    value = token()
    response = gw.api.put("/v1/workspace/files/memory/message.md",
                          json={"text": "clean\n", "message": f"with {value}"})
    assert response.status_code == 422 and response.json()["path"] == "commit message"


def test_the_allowlist_lets_a_value_through(gw):
    from minarad.secrets import fingerprint

    marked = "ghp_" + "A1" * 18
    ok, _ = _via_http(gw, "memory/allowed.md", f"- fixture {marked} minara:allow-secret", False)
    assert ok
    listed = "ghp_" + "B2" * 18
    ok, error = _via_http(gw, "memory/allowed.md", f"- fixture {listed}", False)
    assert not ok
    allow = gw.ws / ".minara-secrets-allow"
    allow.write_text(f"# a test fixture\n{fingerprint('github-token', listed)}\n")
    ok, _ = _via_http(gw, "memory/allowed.md", f"- fixture {listed}", False)
    assert ok
    allow.unlink()


def test_a_dream_redacts_the_token_the_model_answers(gw):
    from tests.llm_server import LoopbackLLM

    value = token()
    _cli(gw, "memory", "append", "memory/2026-11-30.md", "- set up the deploy job",
         no_daemon=True, check=0)
    with LoopbackLLM() as llm:
        llm.script(("text", f"- The deploy token is {value}"))
        env = {**llm.env(), "WORKSPACE_DREAM_ENABLED": "1"}
        proc = _cli(gw, "dream", no_daemon=True, extra=env, check=0)
    assert value not in proc.stdout + proc.stderr
    assert "The deploy token is [REDACTED:github-token]" in (gw.ws / "MEMORY.md").read_text()
    subject_and_body = git(gw.ws, "log", "-1", "--format=%B")
    assert "(redacted 1 secret: github-token)" in subject_and_body


def test_an_artifact_holding_a_token_is_refused_or_redacted(gw):
    value = token()
    made = json.loads(_cli(gw, "--json", "artifact", "create", "report", "--title", "keys",
                           check=0).stdout)
    refused = _cli(gw, "artifact", "complete", made["id"], f"the key is {value}", check=6)
    assert "github-token" in refused.stderr and value not in refused.stderr
    _cli(gw, "artifact", "complete", made["id"], f"the key is {value}", "--redact", check=0)
    got = _cli(gw, "--json", "artifact", "get", made["id"], check=0).stdout
    assert "[REDACTED:github-token]" in got and value not in got


def test_a_compaction_redacts_the_token_the_model_answers(gw):
    from tests.llm_server import LoopbackLLM

    value = token()
    lines = [f"- the deploy checklist step {n} is written out at length here" for n in range(8)]
    _cli(gw, "memory", "set", "memory/long.md", "# Deploys\n\n" + "\n".join(lines),
         check=0)
    with LoopbackLLM() as llm:
        llm.script(("text", f"# Deploys\n\n{lines[0]}\n- the token is {value}"))
        proc = _cli(gw, "--json", "compact", "memory/long.md", "--allow-unmatched",
                    no_daemon=True, extra=llm.env(), check=0)
    assert value not in proc.stdout + proc.stderr
    branch = git(gw.ws, "for-each-ref", "--format=%(refname)", "refs/heads/proposals/")
    message = git(gw.ws, "log", "-1", "--format=%B", branch.split()[-1])
    assert "(redacted 1 secret: github-token)" in message
    assert "the token is [REDACTED:github-token]" in message  # the unmatched line, named


def test_zz_no_value_is_anywhere(gw):
    """Last in the module: every value refused or redacted above is nowhere."""
    assert len(HIDDEN) >= 10
    history = git(gw.ws, "log", "-p", "--all")
    state = [p for root in (gw.ws / ".git" / "minara", gw.ws.parent / "home")
             for p in root.rglob("*") if p.is_file()]
    rejected = list((gw.ws / ".git" / "minara" / "rejected").iterdir())
    assert rejected and all("[REDACTED:github-token]" in p.read_text() for p in rejected
                            if "commit message" not in p.name)
    blobs = b"".join(p.read_bytes() for p in state)
    search = _cli(gw, "search", "--json", "token", check=0).stdout
    assert "REDACTED" in search  # the index holds the redacted lines
    allowed = _cli(gw, "search", "--json", "A1" * 18, check=0).stdout  # and the allowed value
    assert [r["path"] for r in json.loads(allowed)["results"]] == ["memory/allowed.md"]
    for value in HIDDEN:
        assert value not in history
        assert value.encode() not in blobs
        assert value not in gw.log()
        found = _cli(gw, "search", "--json", value.removeprefix("ghp_"), check=0).stdout
        assert json.loads(found)["results"] == []
