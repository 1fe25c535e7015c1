"""The ``minara-settings`` directive: the settings table, built from ``minarad.config``.

Every row comes from :data:`minarad.config.FIELDS` (name, environment
variable, type, default), grouped by the part whose ``# -- part --`` block
holds it in ``minarad/config.py``, so the table cannot drift from the code.
A default computed at run time (``None`` in ``FIELDS``) is described in
:data:`COMPUTED`; a setting missing there stops the build.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

#: What a default computed at run time is, in words.
COMPUTED = {
    "workspace": "``~/.minara/workspace``",
    "data_dir": "platformdirs' user data folder (``~/.local/share/minara``)",
    "state_dir": "platformdirs' user state folder (``~/.local/state/minara``)",
    "author": "the OS user",
    "operator": "the OS user",
}

_PART = re.compile(r"^\s*# -- (.+?) --")
_FIELD = re.compile(r'^\s*"([a-z0-9_]+)": \(')


def parts() -> dict[str, str]:
    """Each setting's part, read from the ``# -- part --`` comments in ``FIELDS``."""
    import minarad.config as config

    source = Path(config.__file__).read_text(encoding="utf-8")
    block = source[source.index("FIELDS: dict"):]
    block = block[:block.index("\n}\n")]
    found, part = {}, ""
    for line in block.splitlines():
        if match := _PART.match(line):
            part = match.group(1)
        elif match := _FIELD.match(line):
            found[match.group(1)] = part
    return found


def default_text(name: str, kind: type, default: object) -> str:
    """The default as the table shows it."""
    if default is None:
        if name not in COMPUTED:
            raise ValueError(f"setting {name!r} has a computed default that "
                             "docs/_ext/minara_settings.py COMPUTED does not describe")
        return COMPUTED[name]
    if kind is bool:
        return "``1`` (on)" if default else "``0`` (off)"
    if default == "":
        return "(empty)"
    if kind is float:
        return f"``{default:g}``"
    if isinstance(default, int) and name.endswith("_bytes"):
        return f"``{default}`` ({default / 1024 / 1024:g} MiB)"
    return f"``{default}``"


def settings_rows() -> list[tuple[str, str, str, str, str]]:
    """(part, name, environment variable, type, default) for every setting."""
    from minarad.config import FIELDS

    part_of = parts()
    return [(part_of.get(name, "other"), name, var, kind.__name__,
             default_text(name, kind, default))
            for name, (var, kind, default) in FIELDS.items()]


class SettingsTable(SphinxDirective):
    """``.. minara-settings::``: one table per part of minara."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        try:
            rows = settings_rows()
        except ValueError as err:
            raise self.error(str(err)) from err
        lines: list[str] = []
        for part in dict.fromkeys(row[0] for row in rows):
            lines += [f".. list-table:: {part[:1].upper() + part[1:]}",
                      "   :header-rows: 1", "   :widths: 30 35 10 25", "",
                      "   * - setting (config.toml key)", "     - environment",
                      "     - type", "     - default"]
            for _part, name, var, kind, default in (r for r in rows if r[0] == part):
                lines += [f"   * - ``{name}``", f"     - ``{var}``",
                          f"     - {kind}", f"     - {default}"]
            lines.append("")
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source="minarad/config.py"),
                                self.content_offset, container)
        return container.children


def setup(app) -> dict:
    """Register the directive."""
    app.add_directive("minara-settings", SettingsTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
