"""Every command has help with an example; every command and setting is in README.rst."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from minarad.cli import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.rst").read_text(encoding="utf-8")


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


@pytest.mark.parametrize("name, command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_command_is_in_the_readme(name, command):
    assert name in README, f"'{name}' is not mentioned in README.rst"


def test_every_setting_is_in_the_readme_table():
    from minarad.config import FIELDS

    missing = [f"{name} ({var})" for name, (var, _kind, _default) in FIELDS.items()
               if f"``{name}``" not in README or var not in README]
    assert missing == [], f"settings missing from README.rst: {missing}"


def test_readme_opens_with_the_two_setup_commands():
    head = README[:2500]
    assert "minara service install" in head
    assert 'pip install -e ".[test]" && .venv/bin/pytest' in head
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    assert 'pip install -e ".[test]" && .venv/bin/pytest' in ci
