"""scan_files and scan_history on real repositories made with the git CLI."""

from __future__ import annotations

from minarad.secrets import ALLOW_FILE, fingerprint
from minarad.secrets.workspace import scan_files, scan_history
from tests.conftest import git
from tests.secrets.samples import samples

TOKENS = {rule: value for rule, _, value in samples()}
GITHUB, SLACK = TOKENS["github-token"], TOKENS["slack-token"]


def _repo(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    git(ws, "config", "user.name", "t")
    git(ws, "config", "user.email", "t@example.com")
    return ws


def _commit(ws, files, message):
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", message)
    return git(ws, "rev-parse", "HEAD").strip()


def test_files_on_disk_with_paths_ignored_and_binary_files_left_out(tmp_path):
    ws = _repo(tmp_path)
    (ws / "memory").mkdir()
    (ws / "memory" / "log.md").write_text(f"# Log\n\n- token {GITHUB}\n")
    (ws / "MEMORY.md").write_text(f"- slack {SLACK}\n")
    (ws / ".gitignore").write_text("private/\n")
    (ws / "private").mkdir()
    (ws / "private" / "keys.md").write_text(f"{GITHUB}\n")
    (ws / "image.bin").write_bytes(b"\0\1" + GITHUB.encode())
    found = scan_files(ws)
    assert [(f.path, f.commit, f.finding.rule, f.finding.line) for f in found] == [
        ("MEMORY.md", None, "slack-token", 1), ("memory/log.md", None, "github-token", 3)]
    assert [f.path for f in scan_files(ws, ["memory"])] == ["memory/log.md"]
    assert [f.path for f in scan_files(ws, ["MEMORY.md"])] == ["MEMORY.md"]


def test_history_names_the_oldest_commit_of_each_credential_even_after_its_removal(tmp_path):
    ws = _repo(tmp_path)
    _commit(ws, {"MEMORY.md": "# Memory\n"}, "start")
    leaked = _commit(ws, {"MEMORY.md": f"# Memory\n- {GITHUB}\n"}, "leak")
    _commit(ws, {"MEMORY.md": f"# Memory\n- {GITHUB}\n- more\n"}, "keep")
    git(ws, "checkout", "-qb", "side")
    side = _commit(ws, {"notes/a.md": f"{SLACK}\n"}, "side leak")
    git(ws, "checkout", "-q", "main")
    _commit(ws, {"MEMORY.md": "# Memory\n- more\n"}, "clean up")
    git(ws, "merge", "-q", "--no-edit", "side")
    assert scan_files(ws) == [] or [f.path for f in scan_files(ws)] == ["notes/a.md"]
    found = scan_history(ws)
    assert [(f.path, f.commit, f.finding.rule) for f in found] == [
        ("MEMORY.md", leaked, "github-token"), ("notes/a.md", side, "slack-token")]
    assert found[0].finding.fingerprint == fingerprint("github-token", GITHUB)
    shown = " ".join(str(f) + str(f.to_dict()) for f in found)
    assert GITHUB not in shown and SLACK not in shown


def test_the_workspace_allowlist_applies_to_files_and_history(tmp_path):
    ws = _repo(tmp_path)
    _commit(ws, {"MEMORY.md": f"- {GITHUB}\n", "notes/a.md": f"{SLACK}\n"}, "both")
    (ws / ALLOW_FILE).write_text(f"{fingerprint('github-token', GITHUB)}\nslack-token notes/*\n")
    assert scan_files(ws) == []
    assert scan_history(ws) == []


def test_an_empty_repository_has_no_history_to_scan(tmp_path):
    assert scan_history(_repo(tmp_path)) == []
