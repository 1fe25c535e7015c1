"""The tantivy schema, its tokenizers, and the mapping of IndexDoc to tantivy.

Every process that opens the index calls :func:`register_tokenizers`:
tantivy keeps custom analyzers in memory only.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, NamedTuple

import tantivy

from minarad.index.cjk import cjk_runs
from minarad.workspace.files import atomic_write

if TYPE_CHECKING:
    from minarad.index.documents import IndexDoc

#: Bump when the schema or the document rules change; an index built with
#: another version is rebuilt by the next writer.
SCHEMA_VERSION = 13  # 9: no front matter or bare heading documents; 10: stems; 11: pages;
#  12: definition lines; 13: the page fast field

CJK_TOKENIZER = "minara_cjk"
EXACT_TOKENIZER = "minara_exact"
STEM_TOKENIZER = "minara_stem"

#: The text fields of a page document (its stems go to ``page_stem``; the
#: names its definition lines open with, the last, are whole words).
PAGE_FIELDS = ("page_title", "page_heading", "page_text", "page_names")
#: The ``level`` of a page document; section and entry documents have none.
PAGE_LEVEL = "page"

#: Bytes per compressed block of stored documents. Fetching a hit
#: decompresses its whole block: with tantivy's 16 KiB default that costs
#: more than the rest of the hit; 2 KiB blocks make the store about a sixth
#: larger and a fetch about three times faster.
DOCSTORE_BLOCKSIZE = 2048


class StoredRecord(NamedTuple):
    """What a hit shows, stored as one value per document.

    One stored field is read and converted much faster than a dozen.
    """

    path: str
    kind: str
    role: str
    channel: str
    blob: str
    title: str
    heading: str
    text: str
    tags: str
    links: list
    line_start: int
    line_end: int
    time: int


def encode_record(record: StoredRecord) -> bytes:
    """The stored form of a record.

    ``N`` and the values separated by NUL characters (the links last), which
    reads several times faster than JSON; ``J`` and a JSON list when a value
    holds a NUL itself.
    """
    *texts, links, line_start, line_end, time = record
    parts = [*texts, str(line_start), str(line_end), str(time), *links]
    if any("\x00" in part for part in parts):
        text = json.dumps(list(record), ensure_ascii=False, separators=(",", ":"))
        return b"J" + text.encode("utf-8", "replace")
    return b"N" + "\x00".join(parts).encode("utf-8", "replace")


def decode_record(data: bytes) -> StoredRecord:
    """The record from its stored form (see :func:`encode_record`)."""
    if data[:1] == b"J":
        return StoredRecord(*json.loads(data[1:]))
    (path, kind, role, channel, blob, title, heading, text, tags,
     line_start, line_end, time, *links) = data[1:].decode("utf-8").split("\x00")
    return StoredRecord(path, kind, role, channel, blob, title, heading, text, tags, links,
                        int(line_start), int(line_end), int(time))


def record_path(data: bytes) -> str:
    """The path of a stored record, the rest of it left unread (see :func:`encode_record`)."""
    if data[:1] == b"J":
        return json.loads(data[1:])[0]
    end = data.find(b"\x00", 1)
    return data[1:end if end >= 0 else len(data)].decode("utf-8")


def page_id(path: str) -> int:
    """The ``page`` field of every document of ``path``: a signed 64-bit hash of the path.

    A search reads it from tantivy's fast field (a column, a few
    microseconds for fifty hits) where the path would cost a stored-document
    read per hit: page ranking needs only which page a hit is of. Two
    paths with the same value (odds about 1 in 10^11 for 10,000 pages)
    would rank as one page.
    """
    import hashlib  # (indexing only: a search's process does not load it)

    digest = hashlib.blake2b(path.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def build_schema() -> tantivy.Schema:
    """Return the schema of a minara index (see :data:`SCHEMA_VERSION`)."""
    sb = tantivy.SchemaBuilder()
    for name in ("path", "kind", "role", "channel", "blob", "links",
                 "path_prefix", "kinds", "visibility", "scope"):
        sb.add_text_field(name, tokenizer_name="raw", index_option="basic")
    for name in ("title", "heading", "text", "tags"):
        sb.add_text_field(name)
    sb.add_text_field("extra")  # front matter / entry fields, tags, path words
    # the lines that open with a name (:func:`~minarad.index.documents.definition_lines`)
    sb.add_text_field("names", tokenizer_name=EXACT_TOKENIZER, index_option="freq")
    sb.add_text_field("cjk", tokenizer_name=CJK_TOKENIZER)
    sb.add_text_field("exact", tokenizer_name=EXACT_TOKENIZER, index_option="freq")
    # title, heading, text and extra, English words by their stem ("deploys" -> "deploy")
    sb.add_text_field("stem", tokenizer_name=STEM_TOKENIZER, index_option="freq")
    # one page document per Markdown file (``level`` "page"): its title, the
    # headings of its sections and all their text, ranked as a whole
    sb.add_text_field("level", tokenizer_name="raw", index_option="basic")
    for name in PAGE_FIELDS[:-1]:
        sb.add_text_field(name)
    sb.add_text_field("page_names", tokenizer_name=EXACT_TOKENIZER, index_option="freq")
    sb.add_text_field("page_stem", tokenizer_name=STEM_TOKENIZER, index_option="freq")
    sb.add_integer_field("time", indexed=True, fast=True)
    sb.add_bytes_field("record", stored=True)
    # :func:`page_id` of the path, on every document: which page a hit is of, read
    # from the fast field without reading the stored record
    sb.add_integer_field("page", indexed=True, fast=True)
    return sb.build()


def set_docstore_blocksize(index_path: str | os.PathLike,
                           blocksize: int = DOCSTORE_BLOCKSIZE) -> None:
    """Set the stored-document block size of a new, still empty index.

    tantivy keeps it in ``meta.json`` (``index_settings``) and uses it for
    every segment it writes or merges; tantivy-py has no argument for it.
    Left as is when the file does not have that shape.
    """
    meta_path = os.path.join(index_path, "meta.json")
    with open(meta_path, encoding="utf-8") as fh:
        meta = json.load(fh)
    settings = meta.get("index_settings")
    if not isinstance(settings, dict) or "docstore_blocksize" not in settings:
        return
    settings["docstore_blocksize"] = blocksize
    atomic_write(meta_path, json.dumps(meta).encode("utf-8"))


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


def stem_analyzer() -> tantivy.TextAnalyzer:
    """:func:`word_analyzer`'s words reduced to their English stem (Snowball).

    Used for the ``stem`` field and its queries alike, so both sides stem
    the same way; ``deploy``, ``Deploys`` and ``deployed`` give ``deploy``.
    """
    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40)).filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.stemmer("english")).build())


def register_tokenizers(index: tantivy.Index) -> None:
    """Register minara's analyzers on an open tantivy index (every process)."""
    index.register_tokenizer(CJK_TOKENIZER, cjk_analyzer())
    index.register_tokenizer(EXACT_TOKENIZER, exact_analyzer())
    index.register_tokenizer(STEM_TOKENIZER, stem_analyzer())


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
    from minarad.index.definitions import definition_names
    from minarad.index.documents import exact_tokens, path_prefixes

    tags = ", ".join(doc.tags)
    out = tantivy.Document(
        path=doc.path, kind=doc.kind, role=doc.role, channel=doc.channel, blob=doc.blob,
        title=doc.title, heading=doc.heading, text=doc.text, tags=tags,
        extra="\n".join((doc.meta, " ".join(doc.tags), doc.path.replace("/", " "))),
        time=doc.time, page=page_id(doc.path),
        visibility=f"channel:{doc.channel}" if doc.channel else "shared",
        scope="memory" if doc.is_memory else "other")
    if doc.kind == "section":
        out.add_text("names", " ".join(definition_names(doc.text)))
    out.add_bytes("record", encode_record(StoredRecord(
        doc.path, doc.kind, doc.role, doc.channel, doc.blob, doc.title, doc.heading, doc.text,
        tags, list(doc.links), doc.line_start, doc.line_end, doc.time)))
    for value in path_prefixes(doc.path):
        out.add_text("path_prefix", value)
    for value in dict.fromkeys((doc.kind, doc.role)):
        out.add_text("kinds", value)
    for value in doc.links:
        out.add_text("links", value)
    searchable = "\n".join((doc.title, doc.heading, doc.text, doc.meta, " ".join(doc.tags)))
    out.add_text("exact", " ".join(exact_tokens(searchable + " " + doc.path)))
    out.add_text("stem", "\n".join((searchable, doc.path.replace("/", " "))))
    tokens = cjk_tokens(searchable, analyzer)
    if tokens:
        out.add_pre_tokenized_text("cjk", tantivy.PreTokenizedString(searchable, tokens))
    return out


def page_to_tantivy(docs: list[IndexDoc]) -> tantivy.Document | None:
    """The page document of one Markdown file's sections (None: not a page of sections).

    It carries the filter fields of the file (path, kinds, scope, channel,
    time) so a filtered search ranks pages under the same filters, and a
    stored record naming the path (no text: hits are its sections).
    """
    from minarad.index.definitions import definition_names
    from minarad.index.documents import path_prefixes

    sections = [d for d in docs if d.kind == "section"]
    if not sections:
        return None
    first = sections[0]
    headings = dict.fromkeys(d.heading.rsplit(" > ", 1)[-1] for d in sections if d.heading)
    text = "\n".join(d.text for d in sections)
    time = max(d.time for d in sections)
    out = tantivy.Document(
        path=first.path, kind=first.kind, role=first.role, channel=first.channel,
        level=PAGE_LEVEL, page_title=first.title, page_heading="\n".join(headings),
        page_text=text, page_names=" ".join(definition_names(text)), time=time,
        page=page_id(first.path),
        visibility=f"channel:{first.channel}" if first.channel else "shared",
        scope="memory" if first.is_memory else "other")
    out.add_text("page_stem", "\n".join((first.title, *headings, text)))
    out.add_bytes("record", encode_record(StoredRecord(
        first.path, first.kind, first.role, first.channel, first.blob, first.title, "", "",
        "", [], first.line_start, sections[-1].line_end, time)))
    for value in path_prefixes(first.path):
        out.add_text("path_prefix", value)
    for value in dict.fromkeys((first.kind, first.role)):
        out.add_text("kinds", value)
    return out
