"""``minara memory get FILE`` without click.

Agents read their memory on every turn, so the plain read skips the CLI
framework: it understands exactly ``[-w DIR | --workspace DIR] [--as NAME]
memory get FILE [--channel ID]`` and hands anything else (``--json``,
``--version``, ``--help``, a workspace that needs seeding) to click, which
gives the same answers more slowly. Errors print and exit exactly as the
click path does.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

from minarad.errors import Forbidden, InvalidInput, MinaraError, NotFound

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
    from minarad.workspace.seed import missing_seed_files

    root = os.path.expanduser(str(settings.workspace))
    if not os.path.isdir(os.path.join(root, ".git")) or missing_seed_files(root):
        return None
    check_no_symlink(root, rel)
    path = os.path.join(root, *rel.split("/"))
    data = read_regular_file(path, rel, settings.max_file_bytes + 1)
    return decode_text(data, settings.max_file_bytes, rel)


def read_regular_file(path: str, rel: str, limit: int) -> bytes:
    """Read up to ``limit`` bytes of ``path`` if it is a regular file, never blocking.

    The file is opened without following a final symlink and without
    waiting for a FIFO's writer, and its type is checked on the open
    descriptor, so a FIFO, socket or device swapped in is refused, not read.

    Raises:
        NotFound: nothing is there (``file_not_found``).
        InvalidInput: a folder, FIFO, socket or device (``not_a_file``).
        Forbidden: the file itself became a symlink (``symlink``).
    """
    fd = _open_without_blocking(path, rel)
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InvalidInput(f"{rel} is a folder", code="not_a_file")
        if not stat.S_ISREG(mode):
            raise InvalidInput(f"{rel} is not a regular file", code="not_a_file")
        return fh.read(limit)


def _open_without_blocking(path: str, rel: str) -> int:
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        raise NotFound(f"{rel} does not exist in the workspace", code="file_not_found",
                       path=rel) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Forbidden(f"{rel} is a symlink; minara does not follow links",
                            code="symlink", path=rel) from None
        if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a socket, a device without driver
            raise InvalidInput(f"{rel} is not a regular file", code="not_a_file") from None
        raise


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
    except OSError:  # unreadable: click reads again and reports it in its one way
        return None
    if text is None:
        return None
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0
