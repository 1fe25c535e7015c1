"""An editor saving in place (truncate, then write) while ``minara memory append`` runs:
the emptied moment is never a version, and no appended line is lost.

Real processes: an editor loop, the ``minara`` CLI with and without a running
``minarad``; the history is read with the real git CLI.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import MINARA, git
from tests.daemon.conftest import wait_until

#: Saves in place as vim does with backupcopy=yes: the text read, the file emptied,
#: then (a moment later) the text written back with one more line.
INPLACE_EDITOR = """
import sys, time
path, saves = sys.argv[1], int(sys.argv[2])
for i in range(saves):
    with open(path, "r+b") as fh:
        text = fh.read()
        fh.seek(0)
        fh.truncate()
        fh.flush()
        time.sleep(0.04)
        fh.write(text + b"- editor save %d\\n" % i)
    time.sleep(0.03)
"""


def _versions(ws, rel: str) -> list[str]:
    """Every committed text of ``rel``, oldest first (the real git CLI)."""
    commits = git(ws, "rev-list", "--reverse", "HEAD", "--", rel).split()
    return [git(ws, "show", f"{c}:{rel}", check=False) for c in commits]


@pytest.mark.parametrize("with_daemon", [False, True])
def test_inplace_saves_racing_appends_commit_no_empty_file_and_lose_no_line(
        daemon_env, ws, daemon, with_daemon):
    rel, saves, appends = "MEMORY.md", 40, 12

    def cli(*args):
        return subprocess.run([MINARA, *args], env=daemon_env, capture_output=True, text=True,
                              timeout=120)

    assert cli("memory", "append", rel, "- first line").returncode == 0
    if with_daemon:
        daemon.start()
    editor = subprocess.Popen([sys.executable, "-c", INPLACE_EDITOR, str(ws / rel), str(saves)])
    results = []
    try:
        for i in range(appends):
            results.append(cli("memory", "append", rel, f"- appended {i}"))
    finally:
        assert editor.wait(timeout=120) == 0
    # an append that kept meeting a save may give up, and then says so
    failed = {i for i, r in enumerate(results) if r.returncode != 0}
    assert all("keeps changing on disk" in results[i].stderr for i in failed), \
        [results[i].stderr for i in failed]
    assert len(failed) <= appends // 2
    if with_daemon:
        wait_until(lambda: git(ws, "status", "--porcelain") == "", what="the last save committed")
    else:
        assert cli("memory", "append", rel, "- last line").returncode == 0

    versions = _versions(ws, rel)
    assert "" not in versions, "an editor's emptied file was committed as a version"
    head = git(ws, "show", f"HEAD:{rel}")
    assert all(f"- editor save {i}\n" in head for i in range(saves))
    history = "".join(versions)
    # each appended line is committed, and stays in HEAD unless an editor saved a
    # buffer read before it arrived (then history holds it)
    assert [i for i in range(appends) if i not in failed
            and f"- appended {i}\n" not in history] == []
    kept = sum(f"- appended {i}\n" in head for i in range(appends) if i not in failed)
    assert kept >= appends - len(failed) - 2, f"only {kept} appended lines are in HEAD"
