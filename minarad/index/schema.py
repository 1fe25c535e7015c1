"""The tantivy schema, its tokenizers, and the mapping of IndexDoc to tantivy.

Every process that opens the index calls :func:`register_tokenizers`:
tantivy keeps custom analyzers in memory only.
"""

from __future__ import annotations

import re

import tantivy

from minarad.index.documents import IndexDoc, exact_tokens, path_prefixes

#: Bump when the schema or the document rules change; an index built with
#: another version is rebuilt by the next writer.
SCHEMA_VERSION = 2

CJK_TOKENIZER = "minara_cjk"
EXACT_TOKENIZER = "minara_exact"

#: Hangul, kana, CJK ideographs (with extension A and compatibility forms).
_CJK_RUN_RE = re.compile(
    "[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]+")

STORED_TEXT = ("title", "heading", "text", "tags")


def build_schema() -> tantivy.Schema:
    """Return the schema of a minara index (see :data:`SCHEMA_VERSION`)."""
    sb = tantivy.SchemaBuilder()
    for name in ("path", "kind", "role", "channel", "blob"):
        sb.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    for name in ("path_prefix", "kinds", "visibility", "scope"):
        sb.add_text_field(name, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("links", stored=True, tokenizer_name="raw", index_option="basic")
    for name in STORED_TEXT:
        sb.add_text_field(name, stored=True)
    sb.add_text_field("extra")  # front matter / entry fields, tags, path words
    sb.add_text_field("cjk", tokenizer_name=CJK_TOKENIZER)
    sb.add_text_field("exact", tokenizer_name=EXACT_TOKENIZER, index_option="freq")
    sb.add_unsigned_field("line_start", stored=True)
    sb.add_unsigned_field("line_end", stored=True)
    sb.add_integer_field("time", stored=True, indexed=True, fast=True)
    return sb.build()


def cjk_analyzer() -> tantivy.TextAnalyzer:
    """Character uni- and bigrams, used for the CJK field."""
    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.ngram(1, 2, False))
            .filter(tantivy.Filter.lowercase()).build())


def exact_analyzer() -> tantivy.TextAnalyzer:
    """Whitespace-separated compound tokens, lower-cased."""
    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
            .filter(tantivy.Filter.remove_long(120)).filter(tantivy.Filter.lowercase()).build())


def word_analyzer() -> tantivy.TextAnalyzer:
    """The same analysis as tantivy's ``default`` tokenizer (used to build queries)."""
    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40)).filter(tantivy.Filter.lowercase()).build())


def register_tokenizers(index: tantivy.Index) -> None:
    """Register minara's analyzers on an open tantivy index (every process)."""
    index.register_tokenizer(CJK_TOKENIZER, cjk_analyzer())
    index.register_tokenizer(EXACT_TOKENIZER, exact_analyzer())


def cjk_runs(text: str) -> list[tuple[int, str]]:
    """Return ``(char offset, run)`` for each run of Hangul, kana or ideographs."""
    return [(m.start(), m.group(0)) for m in _CJK_RUN_RE.finditer(text)]


def cjk_tokens(text: str, analyzer: tantivy.TextAnalyzer) -> list[tantivy.Token]:
    """N-grams of the CJK runs in ``text``, positioned by character offset.

    tantivy's n-gram tokenizer gives every gram position 0; positioning each
    gram at its first character makes ``[[gram@i, gram@i+1]]`` phrases match
    exact substrings.
    """
    tokens = []
    for offset, run in cjk_runs(text):
        for token in analyzer.pre_tokenize(run).tokens:
            start = offset + token.char_offset_from
            tokens.append(tantivy.Token(token.text, start, start,
                                        offset + token.char_offset_to))
    return tokens


def to_tantivy(doc: IndexDoc, analyzer: tantivy.TextAnalyzer) -> tantivy.Document:
    """Convert an :class:`IndexDoc` to a tantivy document."""
    out = tantivy.Document(
        path=doc.path, kind=doc.kind, role=doc.role, channel=doc.channel, blob=doc.blob,
        title=doc.title, heading=doc.heading, text=doc.text, tags=", ".join(doc.tags),
        extra="\n".join((doc.meta, " ".join(doc.tags), doc.path.replace("/", " "))),
        line_start=doc.line_start, line_end=doc.line_end, time=doc.time,
        visibility=f"channel:{doc.channel}" if doc.channel else "shared",
        scope="memory" if doc.is_memory else "other")
    for value in path_prefixes(doc.path):
        out.add_text("path_prefix", value)
    for value in dict.fromkeys((doc.kind, doc.role)):
        out.add_text("kinds", value)
    for value in doc.links:
        out.add_text("links", value)
    searchable = "\n".join((doc.title, doc.heading, doc.text, doc.meta, " ".join(doc.tags)))
    out.add_text("exact", " ".join(exact_tokens(searchable + " " + doc.path)))
    tokens = cjk_tokens(searchable, analyzer)
    if tokens:
        out.add_pre_tokenized_text("cjk", tantivy.PreTokenizedString(searchable, tokens))
    return out
