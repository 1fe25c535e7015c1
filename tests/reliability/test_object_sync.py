"""A commit's loose objects reach the disk before its branch moves to it.

dulwich writes loose objects without fsync; a power cut after the branch
moved could leave it on a commit whose objects never reached the disk (a
repository git calls corrupt). The system calls of a real ``minara``
process, traced, show the order: every object the commit added is fsynced
before the branch's lock file is renamed over the branch.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.conftest import MINARA, git

pytestmark = pytest.mark.skipif(shutil.which("strace") is None,
                                reason="strace is not installed (apt-get install strace)")

CALL = re.compile(r"^(?:\d+ +)?(\w+)\((.*)")
PATH = re.compile(r"<([^>]*)>")


def traced(tmp_path, env, *args) -> list[tuple[str, str]]:
    """Run ``minara ARGS`` under strace; its fsyncs and renames, in order (call, arguments)."""
    log = tmp_path / "trace"
    proc = subprocess.run(["strace", "-f", "-y", "-e",
                           "trace=fsync,fdatasync,rename,renameat,renameat2", "-o", str(log),
                           MINARA, *args], env={**env, "MINARA_NO_DAEMON": "1"},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    calls = []
    for line in log.read_text().splitlines():
        match = CALL.match(line)
        if match:
            calls.append((match.group(1), match.group(2)))
    return calls


@pytest.mark.parametrize("verb", [("memory", "append", "notes/a.md", "- a new line"),
                                  ("memory", "set", "fresh/b.md", "# B\n\nA new page.\n")])
def test_a_commit_syncs_its_objects_before_its_branch_moves(minara, ws, env, tmp_path, verb):
    minara("memory", "set", "notes/a.md", "# A\n\nThe first line.\n", check=0)
    calls = traced(tmp_path, env, *verb)
    added = git(ws, "rev-list", "--objects", "HEAD", "^HEAD~1").split()
    added = [oid for oid in added if re.fullmatch(r"[0-9a-f]{40}", oid)]
    assert len(added) >= 3  # the commit, its trees, the new blob
    moved = next(n for n, (call, args) in enumerate(calls)
                 if call.startswith("rename") and "refs/heads/" in args and ".lock" in args)
    synced = {path for call, args in calls[:moved] if call in ("fsync", "fdatasync")
              for path in PATH.findall(args)}
    objects = ws.resolve() / ".git" / "objects"
    missing = [oid for oid in added if str(objects / oid[:2] / oid[2:]) not in synced]
    assert not missing, f"objects not synced before the branch moved: {missing}"
