"""``minara secrets scan`` through the real console script."""

from __future__ import annotations

import json

from minarad.secrets import ALLOW_FILE, fingerprint
from tests.conftest import git
from tests.secrets.samples import samples

TOKENS = {rule: value for rule, _, value in samples()}
GITHUB = TOKENS["github-token"]


def test_scan_lists_files_and_history_never_the_value_and_exits_1(minara, ws):
    minara("init", check=0)
    assert minara("secrets", "scan", check=0).stdout.strip() == "no credentials found"
    leak = _commit_by_hand(ws, f"- deploy token {GITHUB}")
    minara("memory", "append", "MEMORY.md", "- more", check=0)
    proc = minara("secrets", "scan", "--history", check=1)
    fp = fingerprint("github-token", GITHUB)
    where = f"MEMORY.md:{_line(ws)}:{len('- deploy token ') + 1}: github-token {fp}"
    assert proc.stdout.splitlines() == [where, f"{leak[:12]} {where}"]
    assert "secrets_found" in proc.stderr or "credential(s) found" in proc.stderr
    data = json.loads(minara("--json", "secrets", "scan", "--history", check=1).stdout)
    assert [(f["path"], f["commit"], f["rule"]) for f in data["findings"]] == [
        ("MEMORY.md", None, "github-token"), ("MEMORY.md", leak, "github-token")]
    assert GITHUB not in proc.stdout + proc.stderr + json.dumps(data)


def test_the_allowlist_silences_a_finding_and_reports_its_bad_lines(minara, ws):
    minara("init", check=0)
    _commit_by_hand(ws, f"- {GITHUB}")
    (ws / ALLOW_FILE).write_text(f"{fingerprint('github-token', GITHUB)}\nnot-a-rule\n")
    proc = minara("secrets", "scan", "--history", check=0)
    [line] = proc.stdout.splitlines()
    assert line.startswith(f"warning: {ALLOW_FILE}:2: 'not-a-rule' is neither a rule id")


def _commit_by_hand(ws, line: str) -> str:
    """Append ``line`` to MEMORY.md and commit it with git (minara refuses to write it)."""
    with open(ws / "MEMORY.md", "a") as f:
        f.write(f"{line}\n")
    git(ws, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "by hand")
    return git(ws, "rev-parse", "HEAD").strip()


def _line(ws) -> int:
    lines = (ws / "MEMORY.md").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if GITHUB in line)


def test_a_path_outside_the_workspace_or_missing_is_an_error_not_a_clean_scan(minara, tmp_path):
    minara("init", check=0)
    assert "not in the workspace: nope.md" in minara("secrets", "scan", "nope.md", check=4).stderr
    minara("secrets", "scan", str(tmp_path), check=4)
