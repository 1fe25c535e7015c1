"""Sphinx configuration for minarad's documentation.

Build: ``.venv/bin/sphinx-build -W -q -b html docs docs/_build/html`` (as ``.ci/run`` does).
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE / "_ext"), str(HERE.parent)]

from minarad import __version__  # noqa: E402

project = "minarad"
author = "the minarad authors"
copyright = "minarad authors"
version = release = __version__

extensions = ["sphinx_click", "minara_settings"]
exclude_patterns = ["_build"]
root_doc = "index"
html_theme = "alabaster"
html_static_path: list[str] = []
html_title = f"minarad {__version__}"
# The pages quote shell sessions and tables as they are; no smart quotes.
smartquotes = False
# Help texts write `minara search` for a command: show it as code.
default_role = "literal"


def _escape_stars(app, ctx, lines: list[str]) -> None:
    """Help texts are plain text: a ``*`` (``'proposals/*'``) is not emphasis."""
    lines[:] = [line.replace("*", r"\*") for line in lines]


def _drop_hidden_envvars(app, ctx, lines: list[str]) -> None:
    """Hidden options (systemd's plumbing for ``minarad``) get no envvar entry."""
    hidden = {param.opts[0] for param in ctx.command.params
              if getattr(param, "hidden", False)}
    blocks: list[list[str]] = []
    for line in lines:
        if line.startswith(".. _") or not blocks:
            blocks.append([])
        blocks[-1].append(line)
    lines[:] = [line for block in blocks
                if not any(f":option:`{opt}`" in text for opt in hidden for text in block)
                for line in block]


def setup(app) -> None:
    """Adjust sphinx-click's output for minara's help texts."""
    for event in ("sphinx-click-process-envars", "sphinx-click-process-envvars"):
        if event not in app.events.events:
            app.add_event(event)
        app.connect(event, _drop_hidden_envvars)
    app.connect("sphinx-click-process-description", _escape_stars)
