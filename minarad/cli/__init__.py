"""The ``minara`` command.

This module stays free of click: ``minara memory get FILE`` (the read an
agent makes on every turn) and ``minara memory append FILE TEXT`` (its
most frequent write) are answered by :mod:`minarad.cli.fastpath` without
loading the CLI framework, as are the plain ``memory search``, ``wiki get``
and ``fact list`` (see :data:`FAST_PATHS`); everything else is handed to the click
application in :mod:`minarad.cli.root`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing here
if TYPE_CHECKING:
    from collections.abc import Sequence


#: Other commands answered without click when they can be (the first word
#: among the first five arguments, then ``module:function(args) -> code | None``).
FAST_PATHS = (
    ("wiki", "minarad.cli.wikifast:try_fast_wiki_get"),
    ("fact", "minarad.cli.fastfacts:try_fast_fact_list"),
    ("search", "minarad.cli.searchfast:try_fast_memory_search"),
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    from minarad.cli.fastpath import try_fast_path

    code = try_fast_path(args)
    if code is not None:
        return code
    for word, spec in FAST_PATHS:
        if word in args[:5]:
            import importlib

            module, attr = spec.split(":")
            code = getattr(importlib.import_module(module), attr)(args)
            if code is not None:
                return code
    from minarad.cli.root import main as click_main

    return click_main(args)


def __getattr__(name: str) -> object:
    """``minarad.cli.cli`` is the click root group (loaded on first use)."""
    if name == "cli":
        from minarad.cli.root import cli

        return cli
    raise AttributeError(name)


if __name__ == "__main__":
    sys.exit(main())
