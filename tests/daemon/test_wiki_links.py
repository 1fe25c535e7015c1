"""A running daemon keeps the wiki's backlinks in step with edits made in an editor."""

from __future__ import annotations

import subprocess

from minarad.git.refs import find_git_dir, read_workspace_head
from minarad.wiki.linktable import LinkTable
from tests.daemon.conftest import MINARA, wait_until


def _backlink_sources(ws, name: str) -> list[str]:
    """What the table says now, read without catching it up (the daemon's job)."""
    table = LinkTable(ws, find_git_dir(ws))
    try:
        if not table.is_current():
            return ["(behind HEAD)"]
        return [row.source for row in table.links_to(name, ("",))]
    finally:
        table.close()


def test_an_editor_edit_updates_backlinks_within_one_catch_up(daemon, daemon_env, ws):
    daemon.start()
    run = lambda *a: subprocess.run([MINARA, *a], env=daemon_env, capture_output=True,  # noqa: E731
                                    text=True, timeout=60, check=True).stdout
    run("wiki", "put", "target", "the target page")
    run("wiki", "put", "other", "no links yet")
    assert _backlink_sources(ws, "target") == []

    (ws / "wiki/other.md").write_text("now links to [[target]]\n")  # an editor's save
    wait_until(lambda: _backlink_sources(ws, "target") == ["wiki/other.md"],
               what="the daemon's catch-up of the link table")
    assert read_workspace_head(ws)  # the edit was committed, and the table is at that HEAD
    assert run("wiki", "get", "target").endswith("-- linked from 1 page(s) --\nother  Other\n")

    (ws / "wiki/other.md").unlink()  # deleted in the editor
    wait_until(lambda: _backlink_sources(ws, "target") == [], what="the link removed")
