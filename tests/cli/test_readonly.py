"""A read-only workspace (a read-only mount): reads work, writes fail in one line."""

from __future__ import annotations

import json
import os
import subprocess

import pytest


@pytest.fixture
def read_only_ws(minara, ws, tmp_path, env):
    minara("memory", "append", "MEMORY.md", "- a fact", check=0)
    minara("wiki", "put", "topics/b", "B page.", check=0)
    minara("wiki", "put", "topics/a", "See [[topics/b]].", check=0)
    minara("wiki", "get", "topics/b", check=0)  # the link table is made, at HEAD
    mount = tmp_path / "ro"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "--bind", "-o", "ro", ws, mount],
                                           capture_output=True).returncode != 0:
        pytest.skip("needs root and bind mounts to make a read-only workspace")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", mount], capture_output=True)
        yield mount
    finally:
        subprocess.run(["umount", mount], capture_output=True)


def test_reads_work_and_writes_fail_cleanly(minara, read_only_ws):
    ro = ["--workspace", read_only_ws]
    got = json.loads(minara(*ro, "--json", "memory", "get", "MEMORY.md", check=0).stdout)
    assert got["version"] == 2 and got["text"].endswith("- a fact\n")
    page = minara(*ro, "wiki", "get", "topics/b", check=0).stdout
    assert page.startswith("B page.\n") and "topics/a" in page  # the link table, read as is
    history = minara(*ro, "memory", "history", "MEMORY.md", check=0).stdout
    assert "v2" in history and "v1" in history
    assert "+- a fact" in minara(*ro, "memory", "diff", "MEMORY.md", "1", check=0).stdout
    proc = minara(*ro, "memory", "append", "MEMORY.md", "- more", check=1)
    assert proc.stderr.startswith("minara: error: Read-only file system")
    assert len(proc.stderr.strip().splitlines()) == 1
