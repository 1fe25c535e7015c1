"""``minara memory search QUERY`` without click.

An agent searches its memory about as often as it reads it, so the plain
search skips the CLI framework: it understands exactly ``memory search
QUERY... [-n N | --limit N] [--channel ID] [--json]`` with ``-w DIR |
--workspace DIR``, ``--as NAME`` and ``--json`` before or after (a single-dash
``-word`` stays an exclusion, as in the click command). Anything else (another
flag, ``--``, ``-h``, a limit click would refuse, a workspace that needs
seeding) goes to click, which gives the same answer more slowly. The search
is the click command's: same catch-up, same :meth:`minarad.index.Index.search`
call, same rendering (:mod:`minarad.cli.searchtext`), same errors and exit codes.
"""

from __future__ import annotations

import re
import sys

from minarad.errors import MinaraError

#: Options taking a value, by every name click accepts for them.
_VALUED = {"--workspace": "workspace", "-w": "workspace", "--as": "author",
           "--channel": "channel", "--limit": "limit", "-n": "limit"}
#: Those that may also be written ``--name=VALUE``.
_LONG = {name for name in _VALUED if name.startswith("--")}
#: Those accepted before ``memory search`` (the root group's).
_ROOT = {"--workspace", "-w", "--as"}
#: How long a search waits for another process to finish updating the index
#: (the click command's ``WRITER_WAIT_SECONDS``).
WRITER_WAIT_SECONDS = 2.5
_LIMIT = re.compile(r"[0-9]{1,4}")


def parse_fast_search(args: list[str]) -> dict | None:
    """Return the options of a plain ``memory search QUERY``, or None for anything else."""
    opts: dict = {"json": False, "words": []}
    it = iter(args)
    for arg in it:  # the root group's options, then ``memory search``
        if arg == "--json":
            opts["json"] = True
        elif arg in _ROOT or arg.split("=", 1)[0] in _ROOT and arg.startswith("--"):
            if not _take(arg, it, opts):
                return None
        elif arg == "memory":
            if next(it, None) != "search":
                return None
            break
        else:
            return None
    else:
        return None
    for arg in it:
        name = arg.split("=", 1)[0]
        if arg == "--json":
            opts["json"] = True
        elif arg in _VALUED or (name in _LONG and "=" in arg):
            if not _take(arg, it, opts):
                return None
        elif arg.startswith("--") or arg == "-h" or name in _VALUED:
            return None  # --help, --, -n=5, other options: click's to read (or refuse)
        else:
            opts["words"].append(arg)
    if not opts["words"] or not _valid_limit(opts):
        return None
    return opts


def _take(arg: str, it, opts: dict) -> bool:
    """Store the value of ``arg`` (``--name=VALUE`` or the next argument); False if none."""
    name, eq, value = arg.partition("=")
    if not eq or name not in _LONG:
        name, following = arg, next(it, None)
        if following is None:
            return False
        value = following
    opts[_VALUED[name]] = value
    return True


def _valid_limit(opts: dict) -> bool:
    """A limit as click reads it (1 to 1000); anything else is click's to refuse."""
    limit = opts.get("limit", "10")
    if not _LIMIT.fullmatch(limit) or not 1 <= int(limit) <= 1000:
        return False
    opts["limit"] = int(limit)
    return True


def search_memory(app, query: str, *, channel: str | None, limit: int, as_json: bool):
    """Search memory files as ``minara memory search`` does: ``(stdout text, stderr note)``.

    None when the workspace needs setting up (click does that).
    """
    if not app.is_set_up():
        return None
    from minarad.cli.searchtext import lag_note, render_hits, search_json

    app.check_channel_access(channel, app.settings.author)
    index = app.index
    stats = index.catch_up(wait=WRITER_WAIT_SECONDS)
    versions = CachedVersions(app)
    index.version_of = versions
    try:
        hits = index.search(query, channel=channel, limit=limit, memory_only=True)
    finally:
        versions.close()
    if as_json:
        import json

        return json.dumps(search_json(query, hits, stats), ensure_ascii=False, indent=2,
                          default=str) + "\n", None
    return render_hits(hits, sys.stdout.isatty()) + "\n", lag_note(stats)


class CachedVersions:
    """A hit's version number read straight from the history cache, without the store.

    The cache (``.git/minara/history.sqlite3``) is opened read-only and used
    only when it reflects HEAD; otherwise (or if it cannot be read) the
    store answers, catching the cache up as it always does. Same numbers
    either way: how many commits changed the path.
    """

    def __init__(self, app):
        self.app = app
        self._conn = None
        self._checked = False

    def __call__(self, path: str) -> int:
        conn = self._open()
        if conn is not None:
            import sqlite3

            try:
                return conn.execute("SELECT COUNT(*) FROM changes WHERE path=?",
                                    (path,)).fetchone()[0]
            except sqlite3.Error:
                self.close()
        return self.app.store.version_number(path)

    def _open(self):
        if self._checked:
            return self._conn
        self._checked = True
        import os
        import sqlite3
        from urllib.parse import quote

        from minarad.git import refs

        git_dir = refs.find_git_dir(self.app.root)
        db = os.path.join(git_dir, "minara", "history.sqlite3")
        if not os.path.isfile(db):
            return None
        try:
            conn = sqlite3.connect(f"file:{quote(db)}?mode=ro", uri=True)
            row = conn.execute("SELECT value FROM meta WHERE key='tip'").fetchone()
        except sqlite3.Error:
            return None
        if row is None or row[0] != refs.read_head(git_dir):
            conn.close()
            return None
        self._conn = conn
        return conn

    def close(self) -> None:
        """Close the cache if it was opened."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _report(err: MinaraError, opts: dict, args: list[str]) -> int:
    """Print ``err`` as click's entry point does (one line, JSON with ``--json``)."""
    from minarad.config import debug_requested

    if debug_requested(args):
        import traceback

        traceback.print_exc(file=sys.stderr)
    if "--json" in args:
        import json

        sys.stderr.write(json.dumps(err.to_dict(), ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"minara: error: {err.message}\n")
    return err.exit_code


def try_fast_memory_search(args: list[str]) -> int | None:
    """Answer a plain ``memory search`` and return its exit code, else None (click answers)."""
    opts = parse_fast_search(args)
    if opts is None:
        return None
    from minarad.app import Minara

    try:
        app = Minara.open(workspace=opts.get("workspace"), author=opts.get("author"))
        try:
            out = search_memory(app, " ".join(opts["words"]), channel=opts.get("channel"),
                                limit=opts["limit"], as_json=opts["json"])
        finally:
            app.close()
    except MinaraError as err:
        return _report(err, opts, args)
    except OSError as exc:  # as the click path reports it
        where = f": {exc.filename}" if exc.filename else ""
        return _report(MinaraError(f"{exc.strerror or exc}{where}", code="os_error"), opts, args)
    if out is None:
        return None
    text, note = out
    try:
        if note:
            sys.stderr.write(note + "\n")
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0
