"""``minara memory get`` loads nothing it does not use."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from minarad.cli import main
main(["memory", "get", "MEMORY.md"])
heavy = ("tantivy", "dulwich", "http", "aiohttp", "watchdog", "loguru", "sqlite3", "merge3",
         "platformdirs", "tomllib", "minarad.index", "minarad.daemon")
print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))), file=sys.stderr)
"""


def test_get_imports_no_heavy_module(minara, env):
    minara("memory", "get", "MEMORY.md", check=0)  # first use seeds the workspace
    proc = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                          text=True, check=True)
    assert "## Facts" in proc.stdout
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []
