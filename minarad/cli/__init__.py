"""The ``minara`` command.

This module stays free of click: when the daemon serves the workspace, the
command is handed to it over its local socket (:mod:`minarad.cli.client`)
and runs there, warm; otherwise the click application in
:mod:`minarad.cli.root` runs here. Both give the same bytes and exit code.
"""

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing here
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import NoReturn


def main(argv: "Sequence[str] | None" = None) -> int:
    """Run the CLI (in the daemon when it answers) and return its exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    if argv is None:
        from minarad.cli.client import DIED_CODE, DaemonDied, died_line, run_via_daemon

        try:
            code = run_via_daemon(args)
        except DaemonDied:
            sys.stderr.write(died_line(args))
            return DIED_CODE
        if code is not None:
            _leave(code)
    from minarad.cli.root import main as click_main

    return click_main(args)


def _leave(code: int) -> "NoReturn":
    """End this process with the daemon's exit code, now.

    The daemon wrote the output to this process's descriptors itself and
    this process started nothing that needs ending, so the interpreter's
    shutdown (a few ms of freeing modules) is skipped.
    """
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)


def __getattr__(name: str) -> object:
    """``minarad.cli.cli`` is the click root group (loaded on first use)."""
    if name == "cli":
        from minarad.cli.root import cli

        return cli
    raise AttributeError(name)


if __name__ == "__main__":
    sys.exit(main())
