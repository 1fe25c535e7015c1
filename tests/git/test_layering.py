"""The git layer sits below everything: it imports no other part of minarad, and the
rest of minarad reaches git through it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.git.conftest import commit_files

PACKAGE = Path(__file__).resolve().parents[2] / "minarad"
#: Outside the git layer, only the gitignore rules use dulwich (its ignore matcher).
DULWICH_ALLOWED = {"workspace/ignore.py"}


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.ImportFrom):
            found.add("minarad.git." + (node.module or ""))  # relative: within the layer
    return found


def test_the_git_layer_imports_only_dulwich_the_standard_library_and_errors():
    # minarad.crashpoints is a leaf: named points where a test may end the process
    for path in sorted((PACKAGE / "git").glob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            allowed = (top == "dulwich" or top in sys.stdlib_module_names
                       or name in ("minarad.errors", "minarad.crashpoints")
                       or name.startswith("minarad.git"))
            assert allowed, f"{path.name} imports {name}"


def test_only_the_git_layer_uses_dulwich():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("git/") or rel in DULWICH_ALLOWED:
            continue
        used = {n for n in _imports(path) if n.split(".")[0] == "dulwich"}
        assert not used, f"{rel} imports {sorted(used)}: go through minarad.git"


def test_reading_head_loads_no_dulwich(repo_dir):
    head = commit_files(repo_dir, "one", {"a.md": "a\n"})
    probe = ("import sys\nfrom minarad.git import refs\n"
             f"print(refs.read_workspace_head({str(repo_dir)!r}))\n"
             "print(sorted(m for m in sys.modules if m.startswith('dulwich')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert out[:2] == [head, "[]"]
