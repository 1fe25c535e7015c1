"""Git's ignore rules, compiled once per ``.gitignore`` text and matched cheaply.

The decisions are dulwich's (:mod:`dulwich.ignore`, which follows git's
rules): the deepest ``.gitignore`` with something to say wins, within a file
the last matching pattern wins, and nothing below an excluded folder can be
re-included. What differs is the cost. A file's patterns are compiled once
per text (the cache is keyed by the bytes, so an edited ``.gitignore`` is
never answered by its old rules), a plain name or ``prefix*suffix`` is
matched with string operations, a regular expression is compiled only for
the patterns that need one and only when a name could match them, and a
:class:`IgnoreRules` remembers what it decided for each folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator

#: Compiled rule files by ``(text, ignorecase)``; small, so cleared when full.
_COMPILED: dict[tuple[bytes, bool], RuleFile] = {}
_COMPILED_MAX = 256
#: ``(core.excludesFile, core.ignorecase)`` by the texts of the configuration files.
_CONFIGS: dict[tuple[bytes | None, ...], tuple[str, bool]] = {}
#: Characters that make a pattern more than plain text and ``*``.
_SPECIAL = re.compile(r"[?\[\\]|\*\*")


class Rule:
    """One pattern of an ignore file (the semantics of dulwich's ``Pattern``)."""

    __slots__ = ("index", "exclude", "dir_only", "empty", "contents", "by_name", "body",
                 "stripped", "pieces", "prefix", "suffix", "_ignorecase", "_name_re", "_re")

    def __init__(self, index: int, pattern: bytes, ignorecase: bool):
        self.index = index
        self._ignorecase = ignorecase
        body = pattern
        if body.startswith(b"!"):
            self.exclude, body = False, body[1:]
        else:
            if body.startswith(b"\\") and body[1:2] in (b"!", b"#"):
                body = body[1:]
            self.exclude = True
        self.body = body
        self.dir_only = body.endswith(b"/")
        self.stripped = body.rstrip(b"/")
        self.empty = not self.stripped
        self.contents = self.stripped.endswith((b"/*", b"/**"))
        #: True when the pattern is matched against the last part of a path only.
        self.by_name = b"/" not in self.stripped[:-1]
        self._name_re: re.Pattern | None = None
        self._re: re.Pattern | None = None
        self.pieces, self.prefix, self.suffix = _shape(self.stripped, self.by_name, ignorecase)

    def applies(self, is_dir: bool) -> bool:
        """False when the rule can never decide such an entry."""
        return not self.empty and (is_dir or not self.dir_only)

    def matches(self, name: str, is_dir: bool) -> bool:
        """Whether the rule decides ``name`` (relative to its file, no trailing slash)."""
        if not self.applies(is_dir):
            return False
        target = name.rpartition("/")[2] if self.by_name else name
        if not (target.startswith(self.prefix) and target.endswith(self.suffix)):
            return False
        if self.pieces is not None:
            return _glob(self.pieces, target)
        if self._name_re is None:
            self._name_re = _compile(self.stripped, self._ignorecase)
        return bool(self._name_re.match(os.fsencode(name)))

    def reaches_inside(self, name: str) -> bool:
        """Whether the rule (``dir/*``, ``dir/**``) decides what folder ``name`` holds."""
        return self.contents and (self.match(name + "/x") or self.match(name + "/x/"))

    def match(self, path: str) -> bool:
        """dulwich's ``Pattern.match``: ``path`` may end with ``/`` for a folder."""
        if self.empty or (self.dir_only and not self.exclude and not path.endswith("/")):
            return False
        if self._re is None:
            self._re = _compile(self.body, self._ignorecase)
        raw = os.fsencode(path)
        if self._re.match(raw):
            return True
        if self.dir_only and self.exclude and not path.endswith("/") and "/" in path:
            return bool(self._re.match(raw.rsplit(b"/", 1)[0] + b"/"))
        return False


def _compile(pattern: bytes, ignorecase: bool) -> re.Pattern:
    from dulwich.ignore import translate
    from dulwich.wildmatch import MalformedPattern

    try:
        return re.compile(translate(pattern), re.IGNORECASE if ignorecase else 0)
    except MalformedPattern:
        return re.compile(rb"(?!)")  # git refuses it outright: it matches nothing


def _shape(stripped: bytes, by_name: bool, ignorecase: bool
           ) -> tuple[tuple[str, ...] | None, str, str]:
    """``(pieces, prefix, suffix)``: the literal parts around ``*`` (None: needs a regex).

    ``prefix`` and ``suffix`` are what every matching name starts and ends
    with; they let most names be turned away without a regular expression.
    """
    try:
        text = stripped.decode("utf-8")
    except UnicodeDecodeError:
        return None, "", ""
    if text.startswith("/"):
        text = text[1:]
    if ignorecase or not text.isascii():
        return None, "", ""
    if not _SPECIAL.search(text) and (by_name or "*" not in text):
        pieces = tuple(text.split("*"))
        return pieces, pieces[0], pieces[-1] if len(pieces) > 1 else ""
    cut = _SPECIAL.search(text.replace("*", "?"))
    head = text[:cut.start()] if cut else text
    tail_cut = max(text.rfind(c) for c in "*?[]\\")
    tail = text[tail_cut + 1:].rpartition("/")[2] if tail_cut >= 0 else ""
    return None, head, tail


def _glob(pieces: tuple[str, ...], name: str) -> bool:
    """``fnmatch`` of literal pieces joined by ``*`` (which never spans a ``/``)."""
    if len(pieces) == 1:
        return name == pieces[0]
    if pieces == ("", ""):
        return name != ""  # a lone ``*`` names something (git's wildmatch)
    first, last = pieces[0], pieces[-1]
    if len(name) < len(first) + len(last):
        return False
    end = len(name) - len(last)
    at = len(first)
    for piece in pieces[1:-1]:
        found = name.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return "/" not in name[len(first):end]


class RuleFile:
    """The compiled patterns of one ignore file, with quick ways to turn names away."""

    def __init__(self, patterns: list[bytes], ignorecase: bool, source: bytes = b""):
        #: The file's text (what a saved answer is checked against).
        self.source = source
        self.rules = [Rule(i, p, ignorecase) for i, p in enumerate(patterns)]
        live = [r for r in reversed(self.rules) if not r.empty]
        self._literal: dict[str, list[Rule]] = {}
        for r in live:
            if r.pieces is not None and len(r.pieces) == 1:
                self._literal.setdefault(r.pieces[0], []).append(r)
        others = [r for r in live if r.pieces is None or len(r.pieces) > 1]
        self._by_name = [r for r in others if r.by_name]
        self._by_path = [r for r in others if not r.by_name]
        self._open = any(not r.prefix and not r.suffix for r in self._by_name)
        self._prefixes = tuple({r.prefix for r in self._by_name if r.prefix})
        self._suffixes = tuple({r.suffix for r in self._by_name if not r.prefix})
        self.contents = [r for r in live if r.contents]

    def last_match(self, name: str, is_dir: bool) -> Rule | None:
        """The last rule that decides ``name`` (relative to this file's folder), if any."""
        base = name.rpartition("/")[2]
        literal = self._literal
        by_name = (self._open or base.startswith(self._prefixes)
                   or base.endswith(self._suffixes))
        if not (by_name or self._by_path or base in literal or name in literal):
            return None  # the common case: no pattern can match this name
        best: Rule | None = None
        for key in (base, name) if base != name else (name,):
            for r in literal.get(key, ()):
                if (r.by_name or key == name) and r.matches(name, is_dir):
                    best = r if best is None or r.index > best.index else best
                    break
        floor = best.index if best is not None else -1
        if by_name:
            best = _first_above(self._by_name, floor, name, is_dir) or best
            floor = best.index if best is not None else -1
        return _first_above(self._by_path, floor, name, is_dir) or best


def _first_above(rules: list[Rule], floor: int, name: str, is_dir: bool) -> Rule | None:
    for r in rules:  # last pattern first
        if r.index <= floor:
            return None
        if r.matches(name, is_dir):
            return r
    return None


def compiled(data: bytes, ignorecase: bool = False) -> RuleFile:
    """The :class:`RuleFile` of an ignore file's text (compiled once per text)."""
    key = (data, ignorecase)
    found = _COMPILED.get(key)
    if found is None:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        found = _COMPILED[key] = RuleFile(read_patterns(data), ignorecase, data)
    return found


def read_patterns(data: bytes) -> list[bytes]:
    """The patterns of an ignore file's text (as dulwich's ``read_ignore_patterns``)."""
    patterns = []
    for line in data.split(b"\n"):
        line = line.rstrip(b"\r\n")
        if not line.strip() or line.startswith(b"#"):
            continue
        while line.endswith(b" ") and not line.endswith(b"\\ "):
            line = line[:-1]
        patterns.append(line.replace(b"\\ ", b" "))
    return patterns


class IgnoreRules:
    """What git's ignore rules say about paths of one work tree, read as they are now.

    Reads ``.gitignore`` files lazily (each once), with ``info/exclude`` and
    the user's excludes file (``core.excludesFile``) as the outermost rules.

    Args:
        root: the work tree.
        git_dir: its repository folder.
        overrides: ignore-file texts to use instead of the disk's, by folder
            (``""`` for the top); used to judge a proposed ``.gitignore``.
    """

    def __init__(self, root: str, git_dir: str, overrides: dict[str, bytes] | None = None):
        self.root = root
        self._overrides = overrides or {}
        #: Each file read, by path, with its :func:`file_stamp` taken before the read.
        self._stamps: dict[str, tuple | None] = {}
        excludes, self._ignorecase = _config(git_dir, self._stamps)
        self._outer = [f for f in (self._read(os.path.join(git_dir, "info", "exclude")),
                                   self._read(os.path.expanduser(excludes))) if f is not None]
        self._files: dict[str, RuleFile | None] = {}
        self._excluded_dirs: dict[str, bool] = {}
        self._folder_filters: dict[str, list[tuple[int, RuleFile]]] = {}

    def unchanged(self) -> bool:
        """True when no file these rules read (or found missing) has changed since, as far
        as its stamp tells (a file changed within :data:`RACY_NS` of the read is never
        trusted: same-size rewrites inside a timestamp tick look alike)."""
        if self._overrides:
            return False
        return all(stamp is not None and file_stamp(path, stamp[0]) == stamp
                   for path, stamp in list(self._stamps.items()))

    def _read(self, path: str) -> RuleFile | None:
        self._stamps[path] = file_stamp(path, True)
        try:
            with open(path, "rb") as fh:
                return compiled(fh.read(), self._ignorecase)
        except OSError:
            return None

    def _file(self, folder: str) -> RuleFile | None:
        try:
            return self._files[folder]
        except KeyError:
            pass
        found: RuleFile | None
        if folder in self._overrides:
            found = compiled(self._overrides[folder], self._ignorecase)
        else:
            found = self._read_nofollow(os.path.join(self.root, folder, ".gitignore"))
        self._files[folder] = found
        return found

    def _read_nofollow(self, path: str) -> RuleFile | None:
        self._stamps[path] = file_stamp(path, False)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None  # missing, or a symlink (git does not follow it either)
        with os.fdopen(fd, "rb") as fh:
            return compiled(fh.read(), self._ignorecase)

    def version(self, folders: Iterable[str]) -> tuple:
        """What decides the paths below ``folders`` (each with its ancestors listed).

        The compiled rule files of those folders and the outer files, and the
        case rule. One text compiles to one :class:`RuleFile` while it is
        cached, so two versions are equal (by identity) when every text is.
        """
        return self._ignorecase, tuple(self._outer), tuple(self._file(f) for f in folders)

    def _filters(self, parts: list[str], upto: int) -> Iterator[tuple[int, RuleFile]]:
        """The rule files for a path whose folders are ``parts[:upto]``, deepest first."""
        for depth in range(upto, -1, -1):
            f = self._file("/".join(parts[:depth]))
            if f is not None and f.rules:
                yield depth, f
        for f in self._outer:
            if f.rules:
                yield 0, f

    def _last(self, parts: list[str], upto: int, is_dir: bool) -> Rule | None:
        for depth, f in self._filters(parts, upto):
            rule = f.last_match("/".join(parts[depth:]), is_dir)
            if rule is not None:
                return rule
        return None

    def _blocked(self, folder: str) -> bool:
        """Whether ``folder`` or a folder above it is excluded by name (remembered).

        Nothing below an excluded folder can be re-included.
        """
        found = self._excluded_dirs.get(folder)
        if found is None:
            parent = folder.rpartition("/")[0]
            parts = folder.split("/")
            rule = self._last(parts, len(parts), True)  # its own .gitignore counts, as in dulwich
            found = bool(parent and self._blocked(parent)) or (rule is not None and rule.exclude)
            self._excluded_dirs[folder] = found
        return found

    def _file_filters(self, folder: str) -> list[tuple[int, RuleFile]]:
        """The rule files deciding the files of ``folder``, deepest first (remembered)."""
        found = self._folder_filters.get(folder)
        if found is None:
            parts = folder.split("/") if folder else []
            found = self._folder_filters[folder] = list(self._filters(parts, len(parts)))
        return found

    def is_ignored(self, rel: str, is_dir: bool = False) -> bool:
        """True when git ignores ``rel`` (relative, POSIX, no trailing slash)."""
        folder = rel.rpartition("/")[0]
        if folder and self._blocked(folder):
            return True
        if is_dir:
            parts = rel.split("/")
            rule = self._last(parts, len(parts), True)
            if rule is not None and rule.exclude:
                return True
            return self._excluded_inside(parts)
        for depth, f in self._file_filters(folder):
            rule = f.last_match(rel.split("/", depth)[depth] if depth else rel, False)
            if rule is not None:
                return rule.exclude
        return False

    def _excluded_inside(self, parts: list[str]) -> bool:
        for depth, f in self._filters(parts, len(parts)):
            name = "/".join(parts[depth:])
            for rule in f.contents:
                if rule.reaches_inside(name):
                    return rule.exclude
        return False


#: A file changed less than this before it was read is read again next time, whatever
#: its stamp says (coarse file timestamps: the same stamp may hide a second change).
RACY_NS = 2_000_000_000


def file_stamp(path: str, follow: bool) -> tuple | None:
    """``(follow, device, inode, size, mtime, ctime)`` of ``path`` (``(follow,)`` when
    missing), or None when it changed too recently (:data:`RACY_NS`) to be trusted."""
    import time

    try:
        st = os.stat(path) if follow else os.lstat(path)
    except OSError:
        return (follow,)
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
        return None
    return follow, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _config(git_dir: str, stamps: dict[str, tuple | None] | None = None) -> tuple[str, bool]:
    """``(core.excludesFile, core.ignorecase)`` as git reads them for this repository.

    Parsed once per text of the configuration files (read each time: they are small);
    each file's :func:`file_stamp` goes into ``stamps``.
    """
    texts: list[bytes | None] = []
    for path in _config_files(git_dir):
        if stamps is not None:
            stamps[path] = file_stamp(path, True)
        try:
            with open(path, "rb") as fh:
                texts.append(fh.read())
        except OSError:
            texts.append(None)
    key = tuple(texts)
    found = _CONFIGS.get(key)
    if found is None:
        if len(_CONFIGS) >= _COMPILED_MAX:
            _CONFIGS.clear()
        found = _CONFIGS[key] = _parse_config([t for t in texts if t is not None])
    return found


def _config_files(git_dir: str) -> list[str]:
    """The repository's config file, then the user's and the system's (as dulwich reads them)."""
    env = os.environ
    home = env.get("XDG_CONFIG_HOME", os.path.expanduser("~/.config/"))
    files = [os.path.join(git_dir, "config")]
    if "GIT_CONFIG_GLOBAL" in env:
        files.append(env["GIT_CONFIG_GLOBAL"])
    else:
        files += [os.path.expanduser("~/.gitconfig"), os.path.join(home, "git", "config")]
    if "GIT_CONFIG_SYSTEM" in env:
        files.append(env["GIT_CONFIG_SYSTEM"])
    elif "GIT_CONFIG_NOSYSTEM" not in env:
        files.append("/etc/gitconfig")
    return files


def _parse_config(texts: list[bytes]) -> tuple[str, bool]:
    if not any(word in text.lower() for text in texts
               for word in (b"excludesfile", b"ignorecase", b"include")):
        return _default_excludes(), False  # neither key is set: no config parser loaded
    from io import BytesIO

    from dulwich.config import ConfigFile, StackedConfig, get_xdg_config_home_path

    backends = []
    for text in texts:
        try:
            backends.append(ConfigFile.from_file(BytesIO(text)))
        except ValueError:
            continue  # a malformed file: git would complain; its rules are not read
    config = StackedConfig(backends)
    try:
        value = config.get((b"core",), b"excludesFile")
        excludes = value.decode("utf-8") if isinstance(value, bytes) else str(value)
    except KeyError:
        excludes = get_xdg_config_home_path("git", "ignore")
    return excludes, bool(config.get_boolean((b"core",), b"ignorecase", False))


def _default_excludes() -> str:
    """``$XDG_CONFIG_HOME/git/ignore`` (``~/.config/git/ignore``), git's default excludes file."""
    home = os.environ.get("XDG_CONFIG_HOME", os.path.expanduser("~/.config/"))
    return os.path.join(home, "git", "ignore")
