"""Every command has help with an example; every command and setting is in docs/.

The CLI reference (docs/cli.rst) and the settings table
(docs/configuration.rst) are generated from the code when the docs are
built; these tests build the reference the way Sphinx does and check that
what a reader looks for is there.
"""

from __future__ import annotations

import importlib
import shutil
import sys
import warnings
from pathlib import Path

import click
import pytest

from minarad.cli import cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = (ROOT / "README.rst").read_text(encoding="utf-8")
PAGES = {page.name: page.read_text(encoding="utf-8") for page in sorted(DOCS.glob("*.rst"))}


def _commands(group: click.Group, prefix: str = "minara"):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        full = f"{prefix} {name}"
        yield full, command
        if isinstance(command, click.Group):
            yield from _commands(command, full)


COMMANDS = sorted(_commands(cli), key=lambda item: item[0])


@pytest.mark.parametrize("name, command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_command_has_help_with_an_example(name, command):
    assert command.help and command.help.strip(), f"{name} has no help"
    if not isinstance(command, click.Group):
        assert "Example:" in command.help, f"{name}: help has no 'Example:' line"


@pytest.fixture(scope="module")
def cli_reference(tmp_path_factory) -> str:
    """docs/cli.rst built by Sphinx (text builder; the whole build with -W is in .ci/run)."""
    from sphinx.cmd.build import build_main

    src = tmp_path_factory.mktemp("docs-src")
    out = tmp_path_factory.mktemp("docs-out")
    shutil.copy(DOCS / "conf.py", src / "conf.py")
    shutil.copytree(DOCS / "_ext", src / "_ext")
    shutil.copy(DOCS / "cli.rst", src / "index.rst")
    with warnings.catch_warnings():  # sphinx-click reads an attribute Sphinx deprecates
        warnings.filterwarnings("ignore", module="sphinx_click")
        code = build_main(["-q", "-b", "text", "-D", "root_doc=index", str(src), str(out)])
    assert code == 0, "sphinx-build of docs/cli.rst failed (see the warnings above)"
    return (out / "index.txt").read_text(encoding="utf-8")


def test_the_cli_reference_is_generated_from_the_root_group():
    assert ".. click:: minarad.cli.root:cli" in PAGES["cli.rst"]
    assert ":nested: full" in PAGES["cli.rst"]
    assert "cli" in PAGES["index.rst"] and "limits" in PAGES["index.rst"]


@pytest.mark.parametrize("name, command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_command_is_in_the_docs(name, command, cli_reference):
    usage = f"{name} [OPTIONS]"
    assert usage in cli_reference or any(name in text for text in PAGES.values()), \
        f"'{name}' is neither in the generated CLI reference nor on a docs/ page"


def test_the_daemon_command_is_in_the_cli_reference(cli_reference):
    assert "minarad [OPTIONS]" in cli_reference
    assert "--polling" in cli_reference and "--notify-socket" not in cli_reference


def _settings_extension():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        return importlib.import_module("minara_settings")
    finally:
        sys.path.remove(str(DOCS / "_ext"))


def test_every_setting_is_in_the_generated_table():
    from minarad.config import FIELDS

    assert ".. minara-settings::" in PAGES["configuration.rst"]
    rows = {name: (part, var, default) for part, name, var, _kind, default
            in _settings_extension().settings_rows()}
    assert set(rows) == set(FIELDS)
    for name, (var, _kind, _default) in FIELDS.items():
        part, listed_var, default = rows[name]
        assert listed_var == var and part and part != "other", (name, rows[name])
        assert default, f"{name}: no default shown"


def test_the_settings_table_shows_defaults_as_the_code_has_them():
    rows = {name: default for _part, name, _var, _kind, default
            in _settings_extension().settings_rows()}
    assert rows["debounce_ms"] == "``300``"
    assert rows["heartbeat_enabled"] == "``1`` (on)"
    assert rows["search_weight_semantic"] == "``0.2``"
    assert rows["max_file_bytes"] == "``5242880`` (5 MiB)"
    assert rows["workspace"] == "``~/.minara/workspace``"
    assert rows["llm_model"] == "(empty)"


def test_limits_gather_what_is_not_done():
    pages = {name: text for name, text in PAGES.items() if name != "limits.rst"}
    scattered = [name for name, text in pages.items()
                 if "Not done yet\n~~~~" in text or "What is not done yet:" in text]
    assert scattered == [], f"'Not done yet' lists outside docs/limits.rst: {scattered}"
    assert "Limits and roadmap" in PAGES["limits.rst"]
    assert "limits" in README


def test_readme_is_short_and_opens_with_the_two_setup_commands():
    assert len(README.splitlines()) <= 300
    head = README[:2500]
    assert "minara service install" in head
    assert 'pip install -e ".[test]" --config-settings editable_mode=compat && .venv/bin/pytest' in head
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install -e ".[test]" --config-settings editable_mode=compat && .venv/bin/pytest' in ci
    assert ".venv/bin/sphinx-build -W -q -b html docs docs/_build/html" in ci


def test_readme_points_at_every_docs_page():
    missing = [name for name in PAGES if f"docs/{name}" not in README]
    assert missing == [], f"docs pages the README's table does not name: {missing}"


def test_the_generated_reference_lists_every_command(cli_reference):
    missing = [name for name, _command in COMMANDS if f"{name} [OPTIONS]" not in cli_reference]
    assert missing == [], f"commands sphinx-click did not reach: {missing}"


def test_readme_renders_without_a_docutils_warning():
    """README.rst is the package's long description: plain docutils, no Sphinx roles."""
    import docutils.core

    docutils.core.publish_string(README, writer="null",
                                 settings_overrides={"halt_level": 2, "report_level": 5})


def test_no_page_takes_a_name_sphinx_builds_itself():
    """``search.html`` and ``genindex.html`` are Sphinx's own: a page so named is lost."""
    assert not {"search.rst", "genindex.rst", "py-modindex.rst"} & set(PAGES)
