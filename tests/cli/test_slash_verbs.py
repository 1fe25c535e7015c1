"""``minara soul``, ``identity``, ``heartbeat`` and ``workspace [NAME]``: the REPL's slash
verbs print a file by name with the rules of ``memory get`` (real ``minara`` processes)."""

from __future__ import annotations

import json

SECRET = "SECRET-OUTSIDE-THE-WORKSPACE\n"


def test_each_verb_is_memory_get_of_its_file(minara, ws):
    minara("memory", "set", "HEARTBEAT.md", "# Heartbeat\n\n- last: tea\n", check=0)
    for args, path in [(["soul"], "SOUL.md"), (["identity"], "IDENTITY.md"),
                       (["heartbeat"], "HEARTBEAT.md"), (["workspace", "agents"], "AGENTS.md"),
                       (["workspace", "User.md"], "USER.md"), (["workspace", "tools"], "TOOLS.md"),
                       (["workspace", "bootstrap"], "BOOTSTRAP.md")]:
        assert minara(*args, check=0).stdout == (ws / path).read_text(), args
        assert minara.json(*args) == minara.json("memory", "get", path), args


def test_old_versions_and_time_travel_as_memory_get(minara):
    minara("memory", "set", "SOUL.md", "# Soul\n\nversion two\n", check=0)
    assert minara("soul", "--version", "1", check=0).stdout == \
        minara("memory", "get", "SOUL.md", "--version", "1", check=0).stdout
    now = minara.json("soul", "--at", "now")
    assert now["text"] == "# Soul\n\nversion two\n"
    again = minara.json("workspace", "soul", "--as-of", "now")
    assert (again["text"], again["commit"]) == (now["text"], now["commit"])
    proc = minara("identity", "--at", "2001-01-01", check=4)
    assert "nothing was committed at or before 2001-01-01" in proc.stderr


def test_the_read_path_refuses_what_memory_get_refuses(minara, env, ws, tmp_path):
    minara("init", check=0)
    outside = tmp_path / "secret.md"
    outside.write_text(SECRET)
    (ws / "IDENTITY.md").unlink()
    (ws / "IDENTITY.md").symlink_to(outside)
    proc = minara("identity", check=5)
    assert SECRET not in proc.stdout + proc.stderr and "symlink" in proc.stderr
    assert minara("--json", "workspace", "identity", check=5).stderr == \
        minara("--json", "memory", "get", "IDENTITY.md", check=5).stderr
    (ws / "IDENTITY.md").unlink()
    (ws / "IDENTITY.md").write_text("x" * 2000 + "\n")
    big = minara("identity", check=1, extra_env={"MINARA_MAX_FILE_BYTES": "1000"})
    assert "1,000-byte limit" in big.stderr and big.stdout == ""


def test_channel_rules_as_memory_get(minara, ws):
    minara("memory", "append", "MEMORY.md", "- team note", "--channel", "team-a", check=0)
    assert minara("workspace", "memory", "--channel", "team-a", check=0).stdout == \
        (ws / "channels/team-a/MEMORY.md").read_text()
    minara("channel", "members", "team-a", "--add", "dana", check=0)
    denied = minara("workspace", "memory", "--channel", "team-a", "--as", "eve", check=5)
    assert "team note" not in denied.stdout and "team-a" in denied.stderr
    minara("workspace", "--channel", "team-a", "--as", "eve", check=5)
    lines = minara("workspace", "--channel", "team-a", "--as", "dana", check=0).stdout
    assert "channels/team-a/MEMORY.md" in lines


def test_the_listing_says_where_each_file_stands(minara, ws, tmp_path):
    minara("init", check=0)
    (ws / "TOOLS.md").unlink()
    (ws / "TOOLS.md").symlink_to(tmp_path)
    minara("memory", "set", "USER.md", "# User\n\n" + "- likes tea\n" * 20, check=0)
    proc = minara("workspace", check=0, extra_env={"MINARA_CONTEXT_MAX_FILE_CHARS": "200"})
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[:-1]}
    assert list(rows) == ["soul", "agents", "identity", "user", "memory", "heartbeat",
                          "bootstrap", "tools"]
    size = len((ws / "USER.md").read_bytes())
    assert f"USER.md       {size:,} bytes, 22 lines; over the context's 200-character" \
        in rows["user"]
    assert "HEARTBEAT.md  not written yet: the first turn end writes it" in rows["heartbeat"]
    assert "unreadable (symlink)" in rows["tools"]
    assert proc.stdout.splitlines()[-1].startswith("print one with: minara workspace NAME")
    files = json.loads(minara("--json", "workspace", check=0).stdout)["files"]
    assert {f["name"]: f["state"] for f in files} == {
        "soul": "ok", "agents": "ok", "identity": "ok", "user": "ok", "memory": "ok",
        "heartbeat": "not_written", "bootstrap": "ok", "tools": "symlink"}
    assert next(f for f in files if f["name"] == "user")["bytes"] == size


def test_clear_errors(minara):
    unknown = minara("workspace", "notes", check=2)
    assert "'notes' is not a workspace file name: use one of soul, agents" in unknown.stderr
    assert json.loads(minara("--json", "workspace", "notes", check=2).stderr)["error"] == "usage"
    missing = minara("heartbeat", check=4)
    assert missing.stderr == ("minara: error: HEARTBEAT.md does not exist in the workspace: "
                              "the first turn end writes it (minara turn-end)\n")
    assert "need a NAME" in minara("workspace", "--at", "now", check=2).stderr
