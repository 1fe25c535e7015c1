"""Which words of a query carry its meaning (pure, no tantivy).

A question in plain language ("how do we roll back a migration") is mostly
function words; matching any of them floods the results with noise. This
module knows the function words of English, the particles and endings of
Korean, and the particles and function characters of Japanese and Chinese,
so the query builder can search by the meaningful words and require enough
of them.
"""

from __future__ import annotations

import functools
import re

#: English function words: articles, pronouns, auxiliaries, prepositions,
#: conjunctions and question words.
ENGLISH = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing done down during each few for from
further had has have having he her here hers herself him himself his how i if in into is it
its itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
get gets got let lets may might must shall us also via per please tell show find explain
""".split())

#: Korean words that are function words on their own.
KOREAN_WORDS = frozenset("""
어떻게 어떤 무엇 무엇을 뭐 왜 언제 어디 어디서 누가 누구 그리고 그러나 하지만 또는 및 등 것 수
있는 있다 있나요 있습니까 하는 하나요 합니까 해요 했다 한다 하다 되는 된 이 그 저 우리 우리는 제가
나는 너는 좀 더 또 잘 때 위해 위한 대한 대해 대해서 관한 통해 방법 방법은 방법을
""".split())

#: Korean particles and endings stripped from the end of a word (longest first).
KOREAN_SUFFIXES = tuple(sorted("""
은 는 이 가 을 를 에 에서 에게 한테 께 의 로 으로 와 과 도 만 까지 부터 보다 처럼 이나 나
이랑 랑 하고 에는 에서는 으로는 로는 이란 란 이라 라고 이라고 요 입니다 합니다 하는 하기 하고
해서 했다 했나요 하나요 하려면 하면 되나요 된 되는 인가요 인가 인지
""".split(), key=len, reverse=True))

#: Japanese particles and auxiliary endings (hiragana) that split a run.
JAPANESE_PARTICLES = tuple(sorted("""
は が を に で と の へ も から まで より や か ね よ な です ます でした ました ません
する して した される ない たい どう どの どこ なに 何 ため について による という こと もの
""".split(), key=len, reverse=True))

#: Chinese function words and characters that split a run.
CHINESE_FUNCTION = tuple(sorted("""
的 了 是 在 和 与 及 或 吗 呢 吧 啊 也 都 就 把 被 给 对 从 向 怎么 怎样 如何 什么 哪里 哪个
为什么 我们 你们 他们 我 你 他 她 它 这 那 这个 那个 一个 有 没有 可以 能 会 要 请 之
""".split(), key=len, reverse=True))

_HIRAGANA_RUN = re.compile(r"[\u3040-\u309f]+")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_KANJI_OR_KANA = re.compile(r"[\u4e00-\u9fff\u30a0-\u30ff]")


def is_function_word(word: str) -> bool:
    """True when ``word`` (any case) is an English or Korean function word."""
    lowered = word.lower().strip(".,;:!?()[]{}'\"")
    return lowered in ENGLISH or lowered in KOREAN_WORDS


def strip_korean_ending(word: str) -> str:
    """``word`` without one trailing particle or ending (``마이그레이션을`` -> ``마이그레이션``).

    A word is never cut below two characters.
    """
    for suffix in KOREAN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return word[: -len(suffix)]
    return word


def meaningful_runs(run: str) -> list[str]:
    """The parts of one CJK run that carry meaning.

    Korean: the run without its particle or ending. Japanese (a run with
    kanji or katakana): the run split at hiragana particles and endings.
    Chinese: the run split at function words. A run that would lose
    everything is kept whole.
    """
    if _HANGUL.search(run):
        if run in KOREAN_WORDS:
            return []
        return [strip_korean_ending(run)]
    parts = [run]
    if _HIRAGANA_RUN.search(run) and _KANJI_OR_KANA.search(run):
        parts = _split_at(run, JAPANESE_PARTICLES)
    elif _KANJI_OR_KANA.search(run):
        parts = _split_at(run, CHINESE_FUNCTION)
    parts = [p for p in parts if p]
    return parts or [run]


def _split_at(run: str, words: tuple[str, ...]) -> list[str]:
    """Split ``run`` wherever one of ``words`` stands (longest first)."""
    return [p for p in _splitter(words).split(run) if p]


@functools.lru_cache(maxsize=4)
def _splitter(words: tuple[str, ...]) -> re.Pattern:
    """One regex for ``words`` (built once: escaping them cost more than the split)."""
    return re.compile("|".join(re.escape(w) for w in words))


def required_matches(meaningful: int) -> int:
    """How many of a query's ``meaningful`` words a hit must match in the strict pass.

    One word: one. Two: both (a hit naming both comes before one naming
    either; measured on three corpora by ``bench/quality.py``). Three or
    more: half, rounded up (a noise-only hit, matching one common word of
    a long question, drops out).
    """
    if meaningful < 3:
        return meaningful
    return (meaningful + 1) // 2
