"""Which characters are CJK: Hangul, kana and ideographs (pure, no tantivy).

The regexes are compiled on first use: their large character classes take
milliseconds to compile, which a search for English words never needs.
"""

from __future__ import annotations

import functools
import re

#: Hangul, kana, CJK ideographs (with extension A, compatibility forms and
#: half-width katakana).
CJK_CLASS = ("[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
             "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]")


@functools.cache
def char_regex() -> re.Pattern:
    """One CJK character."""
    return re.compile(CJK_CLASS)


@functools.cache
def run_regex() -> re.Pattern:
    """A run of CJK characters."""
    return re.compile(CJK_CLASS + "+")


def has_cjk(text: str) -> bool:
    """True when ``text`` holds a CJK character (ASCII text answers at once)."""
    return not text.isascii() and char_regex().search(text) is not None


#: Kana (Japanese) and Hangul (Korean), within the CJK characters.
_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")


def script_of(text: str) -> str:
    """The writing system of ``text``: ``ja`` (any kana), ``ko`` (any Hangul),
    ``zh`` (other CJK ideographs), else ``latin``."""
    chars = "".join(run for _offset, run in cjk_runs(text))
    if not chars:
        return "latin"
    if _KANA.search(chars):
        return "ja"
    return "ko" if _HANGUL.search(chars) else "zh"


def cjk_runs(text: str) -> list[tuple[int, str]]:
    """Return ``(char offset, run)`` for each run of Hangul, kana or ideographs."""
    if text.isascii():
        return []
    return [(m.start(), m.group(0)) for m in run_regex().finditer(text)]
