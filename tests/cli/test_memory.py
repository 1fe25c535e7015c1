"""``minara memory`` through the real console script, checked with git."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import MINARA, assert_repo_sound, commit_count, git


def test_get_seeds_a_new_workspace(minara, ws):
    out = minara("memory", "get", "MEMORY.md", check=0).stdout
    assert "## Facts" in out and "## Decisions" in out
    assert_repo_sound(ws)


def test_every_write_is_a_sound_commit_with_author_and_source(minara, ws):
    minara("memory", "append", "MEMORY.md", "- likes green tea", check=0)
    assert_repo_sound(ws)
    minara("--as", "agent-3", "memory", "set", "USER.md", "# Dana\n", "--base", "1", check=0)
    assert_repo_sound(ws)
    log = git(ws, "log", "--format=%an|%(trailers:key=Minara-Source,valueonly,separator=)")
    assert log.splitlines()[:2] == ["agent-3|cli", "tester|cli"]
    assert minara("memory", "get", "USER.md", check=0).stdout == "# Dana\n"


def test_text_from_stdin_and_from_a_file(minara, ws, tmp_path):
    minara("memory", "set", "notes/a.md", "-", input="from stdin\n", check=0)
    (tmp_path / "src.md").write_text("from a file\n")
    minara("memory", "set", "notes/b.md", f"@{tmp_path / 'src.md'}", check=0)
    assert (ws / "notes/a.md").read_text() == "from stdin\n"
    assert (ws / "notes/b.md").read_text() == "from a file\n"


def test_json_output_and_versions(minara):
    first = minara.json("memory", "append", "MEMORY.md", "- a")
    second = minara.json("memory", "append", "MEMORY.md", "- b")
    assert (first["version"], second["version"]) == (2, 3)
    got = minara.json("memory", "get", "MEMORY.md")
    assert got["version"] == 3 and got["text"].endswith("- a\n- b\n")
    assert got["blob_id"] == second["blob_id"]
    old = minara.json("memory", "get", "MEMORY.md", "--version", "2")
    assert old["text"].endswith("- a\n") and old["version"] == 2


def test_channel_memory_is_its_own_file(minara, ws):
    minara("memory", "append", "MEMORY.md", "- team fact", "--channel", "team-a", check=0)
    assert "- team fact" in (ws / "channels/team-a/MEMORY.md").read_text()
    assert "- team fact" not in (ws / "MEMORY.md").read_text()
    out = minara("memory", "get", "MEMORY.md", "--channel", "team-a", check=0).stdout
    assert out == "- team fact\n"
    bad = minara("memory", "get", "MEMORY.md", "--channel", "../x", check=1)
    assert "channel id" in bad.stderr


def test_two_writers_with_one_base_one_wins_other_exits_3(minara, ws, env):
    base = str(minara.json("memory", "get", "USER.md")["version"])
    procs = [subprocess.Popen([MINARA, "--json", "--as", f"writer{n}", "memory", "set",
                               "USER.md", f"text of writer {n}\n", "--base", base], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in range(2)]
    results = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in procs]
    codes = sorted(r[0] for r in results)
    assert codes == [0, 3]
    loser = next(r for r in results if r[0] == 3)
    error = json.loads(loser[2])
    assert error["error"] == "memory_version_conflict"
    with open(error["rejected_text_file"], encoding="utf-8") as fh:
        lost_text = fh.read()
    assert lost_text.startswith("text of writer") and lost_text != (ws / "USER.md").read_text()
    assert_repo_sound(ws)


def test_exit_codes_and_one_line_errors(minara, ws):
    minara("memory", "get", "MEMORY.md", check=0)
    head = git(ws, "rev-parse", "HEAD")
    cases = [
        (("memory", "get", "nope.md"), 4),
        (("memory", "set", "../escape.md", "x"), 5),
        (("memory", "set", ".git/hooks/x", "x"), 5),
        (("memory", "get", "MEMORY.md", "--version", "99"), 4),
        (("memory", "set", "MEMORY.md", "x", "--base", "99"), 1),
        (("memory", "frobnicate"), 2),
    ]
    for args, code in cases:
        proc = minara(*args, check=code)
        if code != 2:
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
            assert proc.stderr.startswith("minara: error: ")
    err = minara("--json", "memory", "get", "nope.md", check=4).stderr
    assert json.loads(err)["error"] == "file_not_found"
    assert git(ws, "rev-parse", "HEAD") == head


def test_invalid_utf8_binary_and_huge_input_change_nothing(minara, ws, tmp_path):
    minara("memory", "get", "MEMORY.md", check=0)
    head = git(ws, "rev-parse", "HEAD")
    (tmp_path / "bad.md").write_bytes(b"caf\xe9\n")
    (tmp_path / "bin.dat").write_bytes(b"\x89PNG\x00\x00")
    (tmp_path / "big.md").write_bytes(b"x" * 2000)
    small = {"MINARA_MAX_FILE_BYTES": "1000"}
    for name, needle in (("bad.md", "invalid UTF-8"), ("bin.dat", "binary"),
                         ("big.md", "limit")):
        proc = minara("memory", "append", "MEMORY.md", f"@{tmp_path / name}", check=1,
                      extra_env=small)
        assert needle in proc.stderr
    assert git(ws, "rev-parse", "HEAD") == head


def test_markdown_bullets_are_text_not_options(minara, ws):
    minara("memory", "append", "MEMORY.md", "- a bullet", check=0)
    minara("memory", "append", "MEMORY.md", "--", "--", check=0)
    minara("memory", "append", "MEMORY.md", "- has -h and --json inside", check=0)
    assert (ws / "MEMORY.md").read_text().endswith("- a bullet\n--\n- has -h and --json inside\n")


def test_history_diff_restore_round_trip(minara, ws):
    minara("memory", "set", "USER.md", "first\n", check=0)
    minara("memory", "set", "USER.md", "second\n", check=0)
    history = minara.json("memory", "history", "USER.md")["versions"]
    assert [v["version"] for v in history] == [3, 2, 1]
    assert history[0]["author"] == "tester" and history[0]["source"] == "cli"
    diff = minara("memory", "diff", "USER.md", "2", "3", check=0).stdout
    assert "-first" in diff and "+second" in diff
    minara("memory", "restore", "USER.md", "2", check=0)
    assert (ws / "USER.md").read_text() == "first\n"
    assert minara.json("memory", "history", "USER.md")["versions"][0]["version"] == 4
    assert "restore USER.md to version 2" in git(ws, "log", "-1", "--format=%B")
    assert_repo_sound(ws)


def test_pull_edit_push_without_concurrent_edit(minara, ws, tmp_path):
    d = tmp_path / "copy"
    pulled = minara.json("memory", "pull", "--dir", d)
    assert [f["name"] for f in pulled["files"]] == ["SOUL.md", "AGENTS.md", "MEMORY.md"]
    (d / "MEMORY.md").write_text((d / "MEMORY.md").read_text() + "- pushed line\n")
    pushed = {f["name"]: f for f in minara.json("memory", "push", "--dir", d)["files"]}
    assert pushed["MEMORY.md"]["action"] == "saved" and pushed["SOUL.md"]["action"] == "unchanged"
    assert (ws / "MEMORY.md").read_text().endswith("- pushed line\n")
    again = minara.json("memory", "push", "--dir", d)["files"]
    assert {f["action"] for f in again} == {"unchanged"}
    assert_repo_sound(ws)


def test_push_after_a_concurrent_edit_merges(minara, ws, tmp_path):
    d = tmp_path / "copy"
    minara("memory", "pull", "--dir", d, check=0)
    minara("memory", "append", "MEMORY.md", "- written meanwhile", check=0)
    (d / "MEMORY.md").write_text((d / "MEMORY.md").read_text().replace(
        "## Facts\n", "## Facts\n\n- my new fact\n"))
    pushed = {f["name"]: f for f in minara.json("memory", "push", "--dir", d)["files"]}
    assert pushed["MEMORY.md"]["action"] == "merged"
    text = (ws / "MEMORY.md").read_text()
    assert "- my new fact" in text and "- written meanwhile" in text
    assert (d / "MEMORY.md").read_text() == text


def test_push_with_a_clash_appends_the_writers_lines(minara, ws, tmp_path):
    d = tmp_path / "copy"
    minara("memory", "set", "SOUL.md", "# Soul\n\nTone: calm\n", check=0)
    minara("memory", "pull", "--dir", d, check=0)
    minara("memory", "set", "SOUL.md", "# Soul\n\nTone: cheerful\n", check=0)
    (d / "SOUL.md").write_text("# Soul\n\nTone: terse\n")
    out = minara("memory", "push", "--dir", d, check=0).stdout
    assert "SOUL.md: merged appended" in out and "your lines appended" in out
    assert (ws / "SOUL.md").read_text() == "# Soul\n\nTone: cheerful\nTone: terse\n"


def test_pull_changed_prints_only_what_changed_for_this_reader(minara, tmp_path):
    d = tmp_path / "copy"
    first = minara("memory", "pull", "--dir", d, "--changed", "--reader", "r1", check=0).stdout
    assert "## SOUL.md" in first and "## MEMORY.md" in first
    assert minara("memory", "pull", "--dir", d, "--changed", "--reader", "r1",
                  check=0).stdout == ""
    minara("memory", "append", "MEMORY.md", "- news", check=0)
    out = minara("memory", "pull", "--dir", d, "--changed", "--reader", "r1", check=0).stdout
    assert "## MEMORY.md" in out and "- news" in out and "SOUL.md" not in out
    other = minara("memory", "pull", "--dir", d, "--changed", "--reader", "r2", check=0).stdout
    assert "## SOUL.md" in other
    minara("memory", "set", "MEMORY.md", "x" * 13_000, "--no-newline", check=0)
    big = minara("memory", "pull", "--dir", d, "--changed", "--reader", "r1", check=0).stdout
    assert "13,000 characters" in big and "xxxx" not in big


def test_push_without_a_pull_says_what_to_do(minara, tmp_path):
    proc = minara("memory", "push", "--dir", tmp_path, check=4)
    assert "minara memory pull" in proc.stderr


@pytest.mark.slow
def test_many_cli_appenders_at_once(minara, ws, env):
    minara("memory", "get", "MEMORY.md", check=0)
    before = commit_count(ws)
    script = ("for i in 1 2 3; do "
              f"{MINARA} memory append MEMORY.md \"- proc $0 line $i\" || exit 1; done")
    procs = [subprocess.Popen(["sh", "-c", script, str(n)], env=env) for n in range(8)]
    assert [p.wait(timeout=300) for p in procs] == [0] * 8
    text = (ws / "MEMORY.md").read_text()
    assert all(f"- proc {n} line {i}\n" in text for n in range(8) for i in range(1, 4))
    assert commit_count(ws) == before + 24
    assert_repo_sound(ws)


def test_push_into_another_workspace_is_refused(minara, tmp_path):
    d = tmp_path / "copy"
    minara("memory", "pull", "--dir", d, check=0)
    (d / "MEMORY.md").write_text("- from workspace A\n")
    other = tmp_path / "other"
    minara("init", other, check=0)
    before = (other / "MEMORY.md").read_text()
    proc = minara("--workspace", other, "memory", "push", "--dir", d, check=1)
    assert "was pulled from" in proc.stderr
    assert (other / "MEMORY.md").read_text() == before


def test_push_checks_every_copy_before_saving_any(minara, ws, tmp_path):
    d = tmp_path / "copy"
    minara("memory", "pull", "--dir", d, check=0)
    head = git(ws, "rev-parse", "HEAD")
    (d / "AGENTS.md").write_text("")
    (d / "SOUL.md").unlink()
    proc = minara("memory", "push", "--dir", d, check=4)
    assert "SOUL.md is missing" in proc.stderr
    assert git(ws, "rev-parse", "HEAD") == head


def test_an_empty_workspace_flag_is_an_error(minara, tmp_path):
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "main.py").write_text("print('hi')\n")
    for args in (("-w", "", "memory", "get", "MEMORY.md"), ("--workspace=", "init")):
        proc = subprocess.run([MINARA, *args], cwd=cwd, env=minara.env, capture_output=True,
                              text=True)
        assert proc.returncode == 1 and "workspace" in proc.stderr
    assert sorted(p.name for p in cwd.iterdir()) == ["main.py"]


def test_small_edges_users_hit(minara, ws):
    minara("memory", "append", "MEMORY.md", "@@alice likes tea", check=0)
    assert (ws / "MEMORY.md").read_text().endswith("@alice likes tea\n")
    (ws / "win.md").write_bytes(b"# Windows\r\nline\r\n")
    minara("memory", "append", "win.md", "- added", check=0)
    assert (ws / "win.md").read_bytes() == b"# Windows\r\nline\r\n- added\r\n"
    minara("memory", "get", "notes/../MEMORY.md", check=0)
    minara("memory", "set", "MEMORY.md", "x", "--base", check=2)
    err = minara("--json", "memory", "get", check=2).stderr
    assert json.loads(err)["error"] == "usage"
    minara("--as", "José Ñ", "memory", "append", "MEMORY.md", "- from josé", check=0)
    assert git(ws, "log", "-1", "--format=%an <%ae>").strip() == "José Ñ <josé-ñ@minara.local>"
    minara("memory", "restore", "MEMORY.md", "1", check=0)
    assert git(ws, "log", "-1", "--format=%s").strip() == "cli: restore MEMORY.md"
    assert_repo_sound(ws)
