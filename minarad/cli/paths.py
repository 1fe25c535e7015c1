"""A FILE argument of the command line as the workspace path it names.

Every command converts its FILE arguments here, and only here: an
absolute path inside the workspace
(``~/.minara/workspace/MEMORY.md``) names the workspace path below it
(``MEMORY.md``); anything else is checked as a workspace path, so an
absolute path outside the workspace is still refused.
"""

from __future__ import annotations

import os


def workspace_path(root: str | os.PathLike, arg: str, channel: str | None = None) -> str:
    """Return the workspace path that command-line argument ``arg`` names.

    Args:
        root: the workspace directory.
        arg: the FILE argument as typed.
        channel: with a channel, ``MEMORY.md`` means ``channels/<id>/MEMORY.md``.

    Raises:
        Forbidden, InvalidInput: as :func:`minarad.workspace.paths.normalize_path`.
    """
    from minarad.workspace.paths import channel_path

    return channel_path(_inside(os.fspath(root), arg), channel)


def _inside(root: str, arg: str) -> str:
    """``arg`` relative to ``root`` when it is an absolute path below it, else ``arg``."""
    if not (arg.startswith("/") or arg == "~" or arg.startswith("~/")):
        return arg
    path = os.path.normpath(os.path.expanduser(arg))
    for base in _spellings(root):
        if path == base:
            return "."  # the workspace itself: refused as such
        if path.startswith(base.rstrip(os.sep) + os.sep):
            return path[len(base.rstrip(os.sep)) + 1:].replace(os.sep, "/")
    return arg


def _spellings(root: str) -> list[str]:
    """The workspace folder as configured and with its symlinks resolved."""
    given = os.path.normpath(os.path.abspath(os.path.expanduser(root)))
    real = os.path.realpath(given)
    return [given] if real == given else [given, real]
