"""CLI answers a new user found wrong: each is checked through the real ``minara``.

``memory pull --changed`` after a plain pull, the commit subject of a wiki
move that fixes links, the counts and state of a promotion that adopts a
hand-edited block, help text without baked-in dates, and ``@directory`` as
TEXT.
"""

from __future__ import annotations

import json
import re

import click

from tests.conftest import git

PROMOTE_EASILY = {"MINARA_PROMOTE_MIN_USES": "2", "MINARA_PROMOTE_MIN_SCORE": "0.3"}


def test_pull_changed_after_a_plain_pull_shows_only_what_changed(minara, tmp_path):
    folder = tmp_path / "copy"
    minara("memory", "pull", "--dir", folder, check=0)
    quiet = minara("memory", "pull", "--dir", folder, "--changed", check=0)
    assert quiet.stdout == "" and "nothing changed since tester's last pull" in quiet.stderr
    minara("memory", "append", "MEMORY.md", "- likes tea", check=0)
    changed = minara.json("memory", "pull", "--dir", folder, "--changed")["changed"]
    assert [f["path"] for f in changed] == ["MEMORY.md"] and "- likes tea" in changed[0]["text"]
    other = minara.json("memory", "pull", "--dir", tmp_path / "other", "--reader", "bob",
                        "--changed")["changed"]
    assert len(other) == 3  # another reader's first pull: everything is new to it


def test_wiki_move_says_rename_or_move_with_or_without_link_fixes(minara, ws):
    minara("wiki", "put", "db/intro", "Intro. See [[db/setup]].", check=0)
    minara("wiki", "put", "db/setup", "Setup.", check=0)
    minara("wiki", "put", "other", "Read [[db/intro]].", check=0)
    minara("wiki", "move", "db", "guide/db", "--fix-links", check=0)
    assert git(ws, "log", "-1", "--format=%s").strip() == \
        "cli: move wiki/db/ -> wiki/guide/db/ (2 files), fixing links in 2 files"
    minara("wiki", "move", "other", "elsewhere", check=0)
    assert git(ws, "log", "-1", "--format=%s").strip() == \
        "cli: rename wiki/other.md -> wiki/elsewhere.md"
    minara("wiki", "move", "guide/db/setup", "setup", "--fix-links", check=0)
    assert git(ws, "log", "-1", "--format=%s").strip() == \
        "cli: rename wiki/guide/db/setup.md -> wiki/setup.md, fixing links in 1 file"
    assert "[[setup]]" in (ws / "wiki/guide/db/intro.md").read_text()
    minara("wiki", "put", "guide", "The guide.", check=0)
    minara("wiki", "move", "guide", "manual", check=0)
    assert git(ws, "log", "-1", "--format=%s").strip() == \
        "cli: move wiki/guide.md, wiki/guide/ -> wiki/manual.md, wiki/manual/ (2 files)"


def _promoted_line(minara, lesson: str) -> str:
    return minara("learn", "show", lesson, check=0, extra_env=PROMOTE_EASILY).stdout \
        .splitlines()[-1]


def test_promote_adopt_counts_what_it_removes_and_show_tells_the_truth(minara, ws, tmp_path):
    def learn(*args, check=0, bar=PROMOTE_EASILY):
        return minara("learn", *args, check=check, extra_env=bar)

    lesson = json.loads(learn("--json", "add", "lesson", "--title", "Re-read after write",
                              "--detail", "Check the file").stdout)["record"]["id"]
    for _ in range(3):
        learn("use", lesson, "--outcome", "success")
    assert learn("promote").stdout.splitlines()[-1].startswith("promote 1, demote 0")
    edited = (ws / "MEMORY.md").read_text().replace(
        "  - Check the file", "  - check  the file, always\n- [lesson] a line of my own")
    (tmp_path / "edited.md").write_text(edited)
    minara("memory", "set", "MEMORY.md", f"@{tmp_path / 'edited.md'}", check=0)
    assert _promoted_line(minara, lesson).startswith("promoted: in MEMORY.md")
    strict = {**PROMOTE_EASILY, "MINARA_PROMOTE_MIN_SCORE": "0.9"}  # it no longer graduates
    assert "left alone" in learn("promote", bar=strict).stdout
    run = learn("promote", "--adopt", bar=strict).stdout.splitlines()
    assert f"removed {lesson}" in run
    assert "dropped hand-written line [lesson] a line of my own" in run
    assert run[-1].startswith("promote 0, demote 1, drop 1 hand-written line(s) (adopted the "
                              "hand-edited block)")
    assert "Check the file" not in (ws / "MEMORY.md").read_text()
    assert _promoted_line(minara, lesson).startswith("promoted: no")


def test_help_names_dates_by_metavar_and_a_directory_is_no_text(minara, ws, tmp_path):
    dream = minara("dream", "--help", check=0).stdout
    assert "on or after DATE" in dream.replace("\n", " ")
    from minarad.cli.root import cli

    dated = [f"{' '.join(path)} {p.name}: {p.help}" for path, p in _options(cli, [])
             if re.search(r"\d{4}-\d{2}-\d{2}", p.help or "")]
    assert dated == []
    minara("memory", "get", "MEMORY.md", check=0)
    proc = minara("memory", "set", "notes/x.md", f"@{tmp_path}", check=2)
    assert f"{tmp_path} is a directory" in proc.stderr and "Usage: minara memory set" \
        in proc.stderr
    err = json.loads(minara("--json", "wiki", "put", "p", f"@{tmp_path}", check=2).stderr)
    assert err["error"] == "usage" and "is a directory" in err["message"]
    assert not (ws / "notes").exists() and not (ws / "wiki/p.md").exists()


def _options(command: click.Command, path: list[str]):
    """Every option of ``command`` and its subcommands, with the command path."""
    ctx = click.Context(command)
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                yield from _options(sub, [*path, name])
    for param in command.params:
        if isinstance(param, click.Option):
            yield path, param
