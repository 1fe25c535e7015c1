"""An editor saving in place (truncate, then write) while ``minara memory append`` runs:
the emptied moment is never a version, and no appended line is lost.

Real processes: an editor loop, the ``minara`` CLI with and without a running
``minarad``; the history is read with the real git CLI.
"""

from __future__ import annotations

import subprocess
import sys
import threading

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


#: Saves in place as a slow editor does: the file emptied and half written, "half" told
#: on stdout, a pause until the test writes a line, then the rest written, the file closed.
PAUSING_EDITOR = """
import sys
with open(sys.argv[1], "r+b") as fh:
    text = fh.read() + b"- the whole of a save, one line long enough to cut\\n"
    fh.seek(0)
    fh.truncate()
    fh.write(text[:len(text) // 2])
    fh.flush()
    print("half", flush=True)
    sys.stdin.readline()
    fh.write(text[len(text) // 2:])
print("saved", flush=True)
"""
WHOLE = "- the whole of a save, one line long enough to cut\n"
#: What the daemon logs when it leaves a file for later because a save is under way.
UNDER_WAY = "save under way, looked at"
#: What a write logs when it waits for a save under way.
WAITING = "waiting for a save under way"

#: Writes a whole text and keeps the file open (as a program logging to it does).
HOLDING_WRITER = """
import sys, time
with open(sys.argv[1], "ab") as fh:
    fh.write(b"- written by a program that keeps the file open\\n")
    fh.flush()
    print("written", flush=True)
    time.sleep(120)
"""


def _editor(code: str, path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, str(path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def _finish(editor: subprocess.Popen) -> None:
    """Let a paused editor write the rest of its save and close the file."""
    editor.stdin.write("go\n")
    editor.stdin.flush()
    assert editor.stdout.readline() == "saved\n"
    assert editor.wait(timeout=60) == 0


def _no_half_save(ws, rel: str, seeded: int) -> list[str]:
    """The versions of ``rel`` after the first ``seeded``, once everything is committed;
    none of them may stop halfway through the editor's save."""
    wait_until(lambda: git(ws, "status", "--porcelain") == "", what="the edits committed")
    versions = _versions(ws, rel)[seeded:]
    assert versions, "the save was never committed"
    assert [v for v in versions if WHOLE not in v] == [], "a half-written save was committed"
    return versions


def test_a_save_paused_half_written_is_committed_only_once_closed(ws, daemon):
    """The daemon's quiet window (150 ms) passes while the save is half written: the
    file is left for later, and its one version is the whole save."""
    rel = "MEMORY.md"
    daemon.start()
    seeded, looked = len(_versions(ws, rel)), daemon.log().count(UNDER_WAY)
    editor = _editor(PAUSING_EDITOR, ws / rel)
    try:
        assert editor.stdout.readline() == "half\n"
        wait_until(lambda: len(_versions(ws, rel)) > seeded
                   or daemon.log().count(UNDER_WAY) > looked,
                   what="the daemon looking at the half-written file")
    finally:
        _finish(editor)
    assert len(_no_half_save(ws, rel, seeded)) == 1
    assert daemon.proc.poll() is None, daemon.log()


def test_an_append_meeting_a_paused_save_waits_for_it_and_keeps_both(daemon_env, ws, daemon):
    """``memory append`` (through the daemon) while an editor's save is half written:
    it appends to the whole save, never takes the half for an editor's version."""
    rel = "MEMORY.md"
    daemon.start()
    seeded = len(_versions(ws, rel))
    editor = _editor(PAUSING_EDITOR, ws / rel)
    try:
        assert editor.stdout.readline() == "half\n"
        append = subprocess.Popen([MINARA, "memory", "append", rel, "- appended meanwhile"],
                                  env=daemon_env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        said: list[str] = []  # a lone write commits on the request's thread: its log is
        reader = threading.Thread(target=lambda: said.extend(append.stderr), daemon=True)
        reader.start()  # the client's stderr, as without the daemon
        wait_until(lambda: append.poll() is not None or WAITING in daemon.log()
                   or any(WAITING in line for line in said), what="the append meeting the save")
    finally:
        _finish(editor)
    assert append.wait(timeout=60) == 0, said
    reader.join(timeout=60)
    _no_half_save(ws, rel, seeded)
    head = git(ws, "show", f"HEAD:{rel}")
    assert head.endswith(WHOLE + "- appended meanwhile\n"), head[-200:]


def test_a_file_held_open_is_committed_all_the_same(ws, daemon):
    """A program that writes a file and keeps it open does not keep it out of history."""
    rel = "MEMORY.md"
    daemon.start()
    writer = _editor(HOLDING_WRITER, ws / rel)
    try:
        assert writer.stdout.readline() == "written\n"
        wait_until(lambda: "keeps the file open" in git(ws, "show", f"HEAD:{rel}"),
                   what="the file held open committed")
        assert writer.poll() is None, "the writer closed the file"
    finally:
        writer.kill()
        writer.wait(timeout=30)
