"""The live soak (bench/soak_live.py) itself, run for a few seconds so it cannot rot.

A real ``minarad`` with its gateway and MCP endpoint, an editor saving
atomically (in-place saves are left to the full soak: a save caught half
written is still committed now and then), one CLI, HTTP and MCP writer,
and another clone pushing ordinary edits and clashing lines to the shared
remote: the soak must find every acknowledged write, nothing twice, and
every check passing. Hostile kinds are left out
here (``--hostile none``); ``python bench/soak_live.py`` runs them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SOAK = Path(__file__).resolve().parents[2] / "bench" / "soak_live.py"
WRITERS = {"editor-rename", "cli", "http", "mcp", "remote", "sync"}


def test_a_short_live_soak_finds_every_write_and_passes_every_check(tmp_path):
    figures = tmp_path / "soak.json"
    done = subprocess.run([sys.executable, str(SOAK), "--minutes", "0.2", "--hostile", "none",
                           "--editors", "1", "--cli", "1", "--http", "1", "--mcp", "1",
                           "--remote-pause", "1", "--sync-every", "3", "--json", str(figures)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(figures.read_text())
    assert all(c["ok"] for c in result["checks"]), result["checks"]
    acked = {kind for kind, row in result["writers"].items() if row["ok"] > 0}
    assert WRITERS <= acked, result["writers"]
    names = {c["check"] for c in result["checks"]}
    assert {"nothing lost", "nothing duplicated", "git fsck --strict (workspace)",
            "git fsck --strict (remote)", "daemon peak RSS"} <= names
    assert "PASS nothing lost" in done.stdout
