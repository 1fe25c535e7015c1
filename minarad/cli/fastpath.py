"""``minara memory get FILE`` and ``minara memory append FILE TEXT`` without click.

Agents read their memory on every turn, and append to it more than they
do anything else, so the plain read and the plain append skip the CLI
framework: they understand exactly ``memory get FILE [--channel ID]`` and
``memory append FILE TEXT [--channel ID]`` (TEXT not starting with ``-``
or ``@``) with ``-w DIR | --workspace DIR`` and ``--as NAME`` before or
after, and hand anything else (``--json``, ``--version``, ``--force``,
``--help``, stdin or ``@file`` text, a workspace that needs seeding) to
click, which gives the same answers more slowly. The read goes through
:meth:`minarad.app.Minara.read_text`, the append through the store's
``append`` as the click command calls it; errors print and exit exactly
as the click path does.
"""

from __future__ import annotations

import sys

from minarad.errors import MinaraError, NotFound

_GLOBAL = {"--workspace": "workspace", "-w": "workspace", "--as": "author"}
#: Options accepted after ``memory get``: its own and the global ones.
_AFTER = {"--channel": "channel", **_GLOBAL}


def take_options(args: list[str], known: dict, out: dict) -> list[str] | None:
    """Consume leading ``--opt VALUE`` / ``--opt=VALUE`` pairs; None if unknown."""
    while args and args[0].startswith("-"):
        name, eq, value = args[0].partition("=")
        if name not in known:
            return None
        if not eq:
            if len(args) < 2:
                return None
            value, args = args[1], args[1:]
        out[known[name]] = value
        args = args[1:]
    return args


def parse_fast_get(args: list[str]) -> dict | None:
    """Return the options of a plain ``memory get``, or None for anything else.

    The global options (``--workspace``, ``--as``) may come before or after
    the subcommand, as click accepts them.
    """
    return _parse_fast(args, "get", ("file",))


def parse_fast_append(args: list[str]) -> dict | None:
    """Return the options of a plain ``memory append FILE TEXT``, or None for anything else.

    As the click command reads them, only option names are options: TEXT
    may start with ``-`` (``- a bullet``). Any flag (``--force``,
    ``--json``, ``--help``), stdin (``-``) or ``@file`` text goes to click.
    """
    opts: dict = {}
    rest = take_options(list(args), _GLOBAL, opts)
    if rest is None or rest[:2] != ["memory", "append"]:
        return None
    positional: list[str] = []
    it = iter(rest[2:])
    for arg in it:
        name, eq, value = arg.partition("=")
        if name in _AFTER:
            if not eq:
                following = next(it, None)
                if following is None:
                    return None
                value = following
            opts[_AFTER[name]] = value
        elif arg.startswith("--") or arg == "-h":
            return None
        else:
            positional.append(arg)
    if len(positional) != 2 or positional[1] == "-" or positional[1].startswith("@"):
        return None
    opts["file"], opts["text"] = positional
    return opts


def _parse_fast(args: list[str], verb: str, names: tuple) -> dict | None:
    opts: dict = {"verb": verb}
    rest = take_options(list(args), _GLOBAL, opts)
    if rest is None or rest[:2] != ["memory", verb] or len(rest) < 2 + len(names):
        return None
    rest = rest[2:]
    for name in names:
        if rest and rest[0].startswith("-"):
            rest = take_options(rest, _AFTER, opts)
        if not rest or rest[0].startswith("-"):
            return None
        opts[name], rest = rest[0], rest[1:]
    rest = take_options(rest, _AFTER, opts)
    return opts if rest == [] else None


def read_from_disk(app, rel: str) -> str | None:
    """Read a workspace file straight from disk, or None if the workspace needs setting up.

    Args:
        app: the :class:`minarad.app.Minara` to read from.
        rel: the workspace path.
    """
    if not app.is_set_up():
        return None
    try:
        return app.read_text(rel)
    except NotFound:
        if _has_history(str(app.root), rel):  # deleted: the store says when, and how to restore
            return None
        raise


def _debug_report(args: list[str]) -> None:
    from minarad.config import debug_requested

    if debug_requested(args):
        import traceback

        traceback.print_exc(file=sys.stderr)


def _has_history(root: str, rel: str) -> bool:
    """True when the history cache knows ``rel`` (read only on the error path)."""
    import os
    import sqlite3
    from urllib.parse import quote

    db = os.path.join(root, ".git", "minara", "history.sqlite3")
    if not os.path.isfile(db):
        return False
    try:
        conn = sqlite3.connect(f"file:{quote(db)}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT 1 FROM changes WHERE path=? LIMIT 1",
                                (rel,)).fetchone() is not None
        finally:
            conn.close()
    except sqlite3.Error:
        return True  # unreadable cache: let the store answer


def append_to_file(app, rel: str, text: str) -> str | None:
    """Append through the store as ``minara memory append`` does; return its output line.

    None when the workspace needs setting up (click does that).
    """
    if not app.is_set_up():
        return None
    result = app.store.append(rel, text, author=app.settings.author, source="cli")
    if result.changed:
        return f"{result.path}: version {result.version} (commit {(result.commit or '-')[:10]})\n"
    return f"{result.path}: unchanged at version {result.version}\n"


def _try_fast_append(opts: dict, args: list[str]) -> int | None:
    from minarad.app import Minara
    from minarad.cli.paths import workspace_path

    try:
        app = Minara.open(workspace=opts.get("workspace"), author=opts.get("author"))
        try:
            app.check_channel_access(opts.get("channel"), app.settings.author)
            line = append_to_file(app, workspace_path(app.root, opts["file"],
                                                      opts.get("channel")), opts["text"])
        finally:
            app.close()
    except MinaraError as err:
        _debug_report(args)
        sys.stderr.write(f"minara: error: {err.message}\n")
        return err.exit_code
    except OSError as exc:  # as the click path reports it (nothing was committed)
        _debug_report(args)
        where = f": {exc.filename}" if exc.filename else ""
        sys.stderr.write(f"minara: error: {exc.strerror or exc}{where}\n")
        return 1
    if line is None:
        return None
    sys.stdout.write(line)
    sys.stdout.flush()
    return 0


def try_fast_path(args: list[str]) -> int | None:
    """Answer a plain ``memory get`` or ``memory append`` and return its exit code, else None."""
    append = parse_fast_append(args)
    if append is not None:
        return _try_fast_append(append, args)
    opts = parse_fast_get(args)
    if opts is None:
        return None
    from minarad.app import Minara
    from minarad.cli.paths import workspace_path

    try:
        app = Minara.open(workspace=opts.get("workspace"), author=opts.get("author"))
        rel = workspace_path(app.root, opts["file"], opts.get("channel"))
        app.check_channel_access(opts.get("channel"), app.settings.author)
        text = read_from_disk(app, rel)
    except MinaraError as err:
        _debug_report(args)
        sys.stderr.write(f"minara: error: {err.message}\n")
        return err.exit_code
    except OSError:  # unreadable: click reads it again and reports the error in one line
        return None
    if text is None:
        return None
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0
