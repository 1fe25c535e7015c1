"""The prompt never carries a credential: ``minara context`` and the MCP prompt and resources."""

from __future__ import annotations

from minarad.secrets import fingerprint
from tests.conftest import git
from tests.mcp.conftest import run, stdio_client
from tests.secrets.samples import samples


def _values() -> dict[str, str]:
    found: dict[str, str] = {}
    for rule, _line, value in samples(11):
        found.setdefault(rule, value)
    return found


def _leak(ws, minara) -> tuple[str, str, str]:
    """Put a token and a key in MEMORY.md, as an editor would with no daemon running."""
    minara("init", check=0)
    values = _values()
    token, key = values["openai-key"], values["private-key"]
    memory = ws / "MEMORY.md"
    memory.write_text(memory.read_text() + f"\n- api key {token}\n\n{key}\n\n"
                      f"- allowed {values['github-token']} minara:allow-secret\n")
    return token, key, values["github-token"]


def test_context_replaces_each_credential_and_names_file_and_line(ws, minara):
    token, key, allowed = _leak(ws, minara)
    lines = (ws / "MEMORY.md").read_text().splitlines()
    line = lines.index(f"- api key {token}") + 1
    proc = minara("context", check=0)
    assert token not in proc.stdout and key not in proc.stdout
    assert "- api key [REDACTED:openai-key]" in proc.stdout
    assert "[REDACTED:private-key]" in proc.stdout
    assert f"- allowed {allowed} minara:allow-secret" in proc.stdout  # allowed inline
    assert (f"MEMORY.md:{line}: openai-key ({fingerprint('openai-key', token)})"
            in proc.stderr)
    assert token not in proc.stderr and key not in proc.stderr
    data = minara.json("context")
    memory = next(f for b in data["blocks"] for f in b["files"] if f["path"] == "MEMORY.md")
    assert [r["rule"] for r in memory["redacted"]] == ["openai-key", "private-key"]
    assert memory["redacted"][0]["line"] == line
    assert token not in str(data)
    assert token not in git(ws, "log", "-p", "--all")  # the CLI held the edit back too


def test_mcp_prompt_and_resource_are_redacted(ws, minara, env):
    token, key, _allowed = _leak(ws, minara)

    async def session():
        async with stdio_client(env) as client:
            prompt = await client.get_prompt("session_context", {})
            memory = (await client.read_resource("minara://workspace/MEMORY.md")).contents[0]
            return prompt.messages[0].content.text, memory.text

    prompt, memory = run(session())
    for text in (prompt, memory):
        assert token not in text and key not in text
        assert "- api key [REDACTED:openai-key]" in text


def test_a_text_once_found_clean_is_scanned_again_when_it_or_the_allowlist_changes(ws, minara):
    """Clean texts are remembered across processes (the rules need not be compiled for
    them): an allowed credential stops being allowed, and a new one is caught, at once."""
    minara("init", check=0)
    token = _values()["openai-key"]
    (ws / ".minara-secrets-allow").write_text("openai-key MEMORY.md\n")
    memory = ws / "MEMORY.md"
    memory.write_text(memory.read_text() + f"\n- api key {token}\n")
    for _ in range(2):  # found clean under this allowlist, then remembered so
        assert f"- api key {token}" in minara("context", check=0).stdout
    (ws / ".minara-secrets-allow").write_text("# nothing allowed\n")
    out = minara("context", check=0).stdout
    assert "- api key [REDACTED:openai-key]" in out and token not in out
    memory.write_text(memory.read_text().replace(f"- api key {token}\n", "- clean\n"))
    for _ in range(2):
        assert "- clean\n" in minara("context", check=0).stdout
    memory.write_text(memory.read_text().replace("- clean\n", f"- again {token}\n"))
    out = minara("context", check=0).stdout
    assert "- again [REDACTED:openai-key]" in out and token not in out
