"""Texts already found clean, remembered across processes.

Compiling the rules costs more than the rest of a ``minara context`` or a
``minara status`` (the budgets measure the redacted context), and the files
a context carries rarely change between two calls. So a text the scan found
clean is remembered by a digest of the rule set, the allowlist, its path
and its bytes, in the user's cache folder beside the rules' own cache: the
next process that meets the same text at the same path under the same rules
and allowlist skips the scan. A text holding a finding is never
remembered: it is scanned, and redacted, every time.

The rule set's identity is the place and time of every module of
:mod:`minarad.secrets` and of the installed detect-secrets, so a changed
rule or an upgrade forgets every verdict.
"""

from __future__ import annotations

import os

#: The memo file, in the folder of the rules' cache.
MEMO_NAME = "clean-texts.json"
#: At most this many verdicts are kept (the newest).
MEMO_MAX = 512


class CleanMemo:
    """The verdicts of one rule set, loaded once per process.

    Args:
        path: the memo file (None: remember nothing across processes).
        stamp: the rule set's identity.
    """

    def __init__(self, path: str | None, stamp: str):
        self.path, self.stamp = path, stamp
        self._clean: dict[str, None] = self._load()

    def _load(self) -> dict[str, None]:
        import json

        if self.path is None:
            return {}
        try:
            with open(self.path, encoding="utf-8") as fh:
                saved = json.load(fh)
            if saved["stamp"] == self.stamp:
                return dict.fromkeys(str(k) for k in saved["clean"])
        except (OSError, ValueError, KeyError, TypeError):
            pass  # missing, torn or of another rule set: start again
        return {}

    def key(self, text: str, path: str, allow: bytes | None) -> str:
        """The digest naming ``text`` at ``path`` under allowlist bytes ``allow``."""
        import hashlib

        digest = hashlib.sha256(f"{self.stamp}\0{path}\0".encode("utf-8", "surrogatepass"))
        digest.update(b"-" if allow is None else hashlib.sha256(allow).digest())
        digest.update(text.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def __contains__(self, key: str) -> bool:
        return key in self._clean

    def add(self, key: str) -> None:
        """Remember ``key`` as clean and save the memo (a cache: not fsynced; in a
        request served by the daemon, once it is answered)."""
        from minarad.cachesave import save_cache

        self._clean[key] = None
        while len(self._clean) > MEMO_MAX:
            del self._clean[next(iter(self._clean))]
        if self.path is not None:
            save_cache(self._save)

    def _save(self) -> None:
        from minarad.cachesave import save_json

        assert self.path is not None
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
        except OSError:
            return
        save_json(self.path, {"stamp": self.stamp, "clean": list(self._clean)})


_MEMO: list[CleanMemo] = []


def clean_memo() -> CleanMemo:
    """This process's :class:`CleanMemo` (the file is read on first use)."""
    if not _MEMO:
        from minarad.secrets.rules import rules_cache_file

        cache = rules_cache_file()
        path = None if cache is None else os.path.join(os.path.dirname(cache), MEMO_NAME)
        _MEMO.append(CleanMemo(path, rules_stamp(cache)))
    return _MEMO[0]


def rules_stamp(cache: str | None) -> str:
    """The identity of the rule set: each module of this package (place, time, size) and
    the detect-secrets patterns' cache name (which names the installed version)."""
    import hashlib

    folder = os.path.dirname(os.path.abspath(__file__))
    parts = [folder, cache or "-"]
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.name.endswith(".py"):
                st = entry.stat()
                parts.append(f"{entry.name}:{st.st_mtime_ns}:{st.st_size}")
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()
