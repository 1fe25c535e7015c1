"""With no daemon, commands that commit an editor's change hold a credential back too."""

from __future__ import annotations

import json

from minarad.secrets import fingerprint
from tests.conftest import git
from tests.secrets.samples import samples


def test_reads_doctor_and_writes_never_commit_an_edit_holding_a_key(ws, minara):
    value = next(v for rule, _l, v in samples(3) if rule == "stripe-key")
    minara("init", check=0)
    memory = ws / "MEMORY.md"
    memory.write_text(memory.read_text() + f"\n- billing {value}\n")
    line = memory.read_text().count("\n")
    minara("memory", "get", "MEMORY.md", check=0)  # a read absorbs editor changes
    refused = minara("--json", "memory", "append", "MEMORY.md", "- more", check=1)
    error = json.loads(refused.stderr)
    assert error["error"] == "secret_held_back" and error["path"] == "MEMORY.md"
    assert error["findings"] == [{"line": line, "column": 11, "rule": "stripe-key",
                                  "fingerprint": fingerprint("stripe-key", value)}]
    assert value not in refused.stderr and "- more" not in memory.read_text()
    doctor = json.loads(minara("--json", "doctor", "--fix", check=None).stdout)
    held = next(c for c in doctor["checks"] if c["check"] == "secrets")
    assert held["status"] == "warn" and f"MEMORY.md: line {line}: stripe-key" in held["detail"]
    assert "minara:allow-secret" in held["hint"]
    assert value not in git(ws, "log", "-p", "--all") and value not in json.dumps(doctor)
    memory.write_text(memory.read_text().replace(value, "in the vault"))
    minara("memory", "append", "MEMORY.md", "- more", check=0)
    assert "billing in the vault" in git(ws, "show", "HEAD:MEMORY.md")


def test_a_whole_write_replaces_a_held_back_text_without_committing_it(ws, minara):
    value = next(v for rule, _l, v in samples(4) if rule == "google-api-key")
    minara("init", check=0)
    (ws / "USER.md").write_text(f"# User\n\nmaps key {value}\n")
    version = minara.json("memory", "get", "USER.md")["version"]
    minara("memory", "set", "USER.md", "# User\n\nmaps key: ask the operator",
           "--base", version, check=0)  # what the web UI's editor sends
    assert (ws / "USER.md").read_text() == "# User\n\nmaps key: ask the operator\n"
    assert value not in git(ws, "log", "-p", "--all")
