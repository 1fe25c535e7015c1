"""The checks CI runs over the source are configured in the repository and kept honest.

CI (``.ci/run``) runs ruff and mypy over ``minarad/`` before the tests; these
tests do not run them (mypy takes a while), they check that the configuration
and the source say what CI relies on.
"""

from __future__ import annotations

import configparser
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "minarad"
README_TEST_COMMAND = 'python3 -m venv .venv && .venv/bin/pip install -e ".[test]" --config-settings editable_mode=compat && .venv/bin/pytest'
#: ``# type: ignore[code]`` or ``# noqa: CODE``; a bare one silences everything on its line.
_BARE_IGNORE = re.compile(r"#\s*type:\s*ignore(?!\[)|#\s*noqa(?!:\s*[A-Z]+\d+)")
_TYPE_IGNORE = re.compile(r"#\s*type:\s*ignore\[[a-z-, ]+\]")


def _setup_cfg() -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg", encoding="utf-8")
    return parser


def _ci_commands() -> list[str]:
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def _source_lines():
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            yield f"{path.relative_to(ROOT)}:{number}", line


def test_ci_lints_and_type_checks_before_the_readme_test_command():
    commands = _ci_commands()
    assert commands[-1] == README_TEST_COMMAND
    assert README_TEST_COMMAND in (ROOT / "README.rst").read_text(encoding="utf-8")
    checks = [i for i, c in enumerate(commands) if ".venv/bin/ruff check minarad/" in c
              and ".venv/bin/mypy minarad/" in c]
    installs = [i for i, c in enumerate(commands) if 'pip install -e ".[test]"' in c]
    assert checks and installs[0] < checks[0] < len(commands) - 1


def test_the_test_extra_installs_both_checkers():
    extra = _setup_cfg()["options.extras_require"]["test"].split()
    names = {re.split(r"[<>=!~\[]", req)[0].lower() for req in extra}
    assert {"mypy", "ruff", "pytest"} <= names


def test_mypy_checks_the_package_including_untyped_functions():
    mypy = _setup_cfg()["mypy"]
    assert mypy["files"].strip() == "minarad"
    assert mypy["python_version"].strip() == "3.11"
    assert mypy.getboolean("check_untyped_defs")
    assert mypy.getboolean("warn_unused_ignores")


def test_ruff_keeps_its_rules_and_leaves_import_order_alone():
    config = tomllib.loads((ROOT / "ruff.toml").read_text(encoding="utf-8"))
    assert config["line-length"] == 100
    selected = set(config["lint"]["select"])
    assert {"E", "F", "W", "B"} <= selected
    assert "I" not in selected and "ALL" not in selected


def test_every_silenced_finding_names_its_code():
    bare = [where for where, line in _source_lines() if _BARE_IGNORE.search(line)]
    assert not bare, f"name the error code: {bare}"


def test_every_type_ignore_says_why():
    """A ``# type: ignore[code]`` is kept only where a stub is wrong, so it carries a reason:
    a comment after it, or a comment on the line above."""
    lines = list(_source_lines())
    unexplained = []
    for i, (where, line) in enumerate(lines):
        match = _TYPE_IGNORE.search(line)
        if match is None:
            continue
        after = line[match.end():].strip()
        before = lines[i - 1][1].strip() if i else ""
        if not after.startswith("#") and not before.startswith("#"):
            unexplained.append(where)
    assert not unexplained, f"say why the finding is wrong: {unexplained}"


def _module_exists(dotted: str) -> bool:
    """Whether ``dotted`` names a module or package of this project."""
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_uses(path: Path) -> list[str]:
    """``from x import _y`` and ``x._y`` (``x`` a module of the package) in one file."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    modules: dict[str, str] = {}  # local name -> module it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    modules[alias.asname] = alias.name
                else:
                    modules[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                if _private(alias.name) and base.split(".")[0] == "minarad":
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: "
                                 f"from {base} import {alias.name}")
                elif _module_exists(f"{base}.{alias.name}"):
                    modules[alias.asname or alias.name] = f"{base}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            chain, value = [], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in modules:
                dotted = ".".join([modules[value.id], *reversed(chain)])
                if dotted.split(".")[0] == "minarad" and _module_exists(dotted):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {dotted}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names():
    """A name with a leading underscore is its module's own: used elsewhere, it is made
    public (renamed) instead, so a reader can trust that ``_name`` has no outside callers."""
    found = [use for path in sorted(PACKAGE.rglob("*.py")) for use in _private_uses(path)]
    assert not found, "\n".join(found)


def test_no_bench_script_is_named_like_a_standard_library_module():
    # a script's folder is first on the import path: bench/keyword.py once broke
    # ``import argparse`` (collections imports keyword) in every bench started there
    names = {p.stem for p in (ROOT / "bench").glob("*.py")}
    assert not names & set(sys.stdlib_module_names)
