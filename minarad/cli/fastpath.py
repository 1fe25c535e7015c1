"""``minara memory get FILE`` without click.

Agents read their memory on every turn, so the plain read skips the CLI
framework: it understands exactly ``[-w DIR | --workspace DIR] [--as NAME]
memory get FILE [--channel ID]`` and hands anything else (``--json``,
``--version``, ``--help``, a workspace that needs seeding) to click, which
gives the same answers more slowly. Errors print and exit exactly as the
click path does.
"""

from __future__ import annotations

import os
import sys

from minarad.errors import MinaraError, NotFound

_GLOBAL = {"--workspace": "workspace", "-w": "workspace", "--as": "author"}


def _take_options(args: list[str], known: dict, out: dict) -> list[str] | None:
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
    """Return the options of a plain ``memory get``, or None for anything else."""
    opts: dict = {}
    rest = _take_options(list(args), _GLOBAL, opts)
    if rest is None or rest[:2] != ["memory", "get"] or len(rest) < 3:
        return None
    rest = rest[2:]
    if rest[0].startswith("-"):
        rest = _take_options(rest, {"--channel": "channel"}, opts)
        if not rest:
            return None
    opts["file"], rest = rest[0], rest[1:]
    rest = _take_options(rest, {"--channel": "channel"}, opts)
    return opts if rest == [] else None


def read_from_disk(settings, rel: str) -> str | None:
    """Read a workspace file straight from disk, or None if the workspace needs setting up."""
    from minarad.store.content import decode_text
    from minarad.workspace.paths import check_no_symlink
    from minarad.workspace.regular import read_regular_file
    from minarad.workspace.seed import missing_seed_files

    root = os.path.expanduser(str(settings.workspace))
    if not os.path.isdir(os.path.join(root, ".git")) or missing_seed_files(root):
        return None
    check_no_symlink(root, rel)
    path = os.path.join(root, *rel.split("/"))
    try:
        data = read_regular_file(path, rel, settings.max_file_bytes + 1)
    except NotFound:
        if _has_history(root, rel):  # deleted: the store says when, and how to restore it
            return None
        raise
    return decode_text(data, settings.max_file_bytes, rel)


def _has_history(root: str, rel: str) -> bool:
    """True when the history cache knows ``rel`` (read only on the error path)."""
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


def try_fast_path(args: list[str]) -> int | None:
    """Answer a plain ``memory get`` and return its exit code, else None."""
    opts = parse_fast_get(args)
    if opts is None:
        return None
    from minarad.config import load_settings
    from minarad.workspace.paths import channel_path

    try:
        settings = load_settings({"workspace": opts.get("workspace"),
                                  "author": opts.get("author")})
        text = read_from_disk(settings, channel_path(opts["file"], opts.get("channel")))
    except MinaraError as err:
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
