"""Definition lines: the short lines a reference page opens with a name it explains.

``autovacuum_freeze_max_age (integer)``, ``os.path.join(path, *paths)``,
``--follow``: the page that defines a name says so on a line of its own;
pages that only mention it do so in sentences. The index keeps the names
those lines open with (``names``, ``page_names``) and a query word written
as a name looks them up. Pure functions, no heavy imports (a search loads this).
"""

from __future__ import annotations

import re

_LIST_MARK_RE = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
#: The name that opens a definition line: a command-line option, a dotted,
#: snake_case, camelCase or upper-case name, a call (``name(``), or one
#: lower-case word that is the whole line.
_NAME_RE = re.compile(r"^(?:--?[A-Za-z][\w-]*|[A-Za-z_][\w]*(?:[._:][\w]+)*(?=\()|"
                      r"[A-Za-z_]\w*(?:[._:$][\w$]+)+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|"
                      r"[A-Z]{2,}[a-z]\w*|[A-Z][A-Z0-9_]{2,}|[a-z][a-z0-9_]{2,}$)")
#: A lower-case name with a separator in it (``sslmode`` alone is a word).
_LOWER_NAME_RE = re.compile(r"--?[a-z][\w-]*|[a-z_][a-z0-9]*(?:[._:$][a-z0-9_$]+)+(?:\(\))?|"
                            r"[a-z0-9]+_[a-z0-9_]+")
_OPTION_RE = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")
DEFINITION_MAX = 100
#: A query of at most this many words may name upper-case definitions (``GROUP BY``).
SHORT_QUERY = 3


def definition_lines(text: str) -> list[str]:
    """The lines of ``text`` that open with a name and stand alone: definitions.

    A reference page states what it defines on a short line of its own
    (``autovacuum_freeze_max_age (integer)``, ``os.path.join(path, *paths)``,
    ``--follow``, ``PQexecPrepared``, ``TEMPORARY or TEMP``) and explains it
    below; pages that only mention the name do so inside sentences. A line
    counts when it is at most :data:`DEFINITION_MAX` characters, does not
    end a sentence, and its first word is a name as code writes one
    (an option, a dotted, snake_case, camelCase or upper-case name, a call),
    or the line is one lower-case word alone (``sslmode``), and the next
    line explains it: a line of names followed by another (a list of
    contents, an index) defines nothing. Lines inside fenced code blocks do
    not count; list marks and backticks are set aside.
    """
    found, fenced = [], False
    candidate = None  # the last line that may define a name, until the next line shows
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fenced, candidate = not fenced, None
            continue
        if fenced or not line:
            continue
        named = _named_line(line)
        if candidate is not None and named is None:
            found.append(candidate)
        candidate = named
    return found


def _named_line(line: str) -> str | None:
    """``line`` without list marks and backticks when it may define a name, else None."""
    if len(line) > DEFINITION_MAX or line[-1] in ".;!?,":
        return None
    line = _LIST_MARK_RE.sub("", line).replace("`", "").replace("**", "").strip()
    return line if line and _NAME_RE.match(line) else None


def definition_names(text: str) -> list[str]:
    """The names the definition lines of ``text`` open with, as :func:`definition_name`
    gives them (every option of a line of options: ``-p, -u, --patch``; a
    dotted name also by its last parts: ``os.path.join``, ``path.join``, ``join``)."""
    found = []
    for line in definition_lines(text):
        opening = _NAME_RE.match(line)
        words = _OPTION_RE.findall(line) if line.startswith("-") else [opening.group(0)] \
            if opening else []
        for name in filter(None, map(definition_name, words)):
            # ``os.path.join`` is also looked up as ``path.join`` and ``join``
            found += [name] + [name[i + 1:] for i, c in enumerate(name)
                               if c == "." and 0 < i < len(name) - 1]
    return found


def names_a_definition(word: str, words: int) -> bool:
    """True when a word of a query of ``words`` words is looked up among definition
    names: it is written as a name (as :func:`definition_lines` knows one), or
    it is the query's only word.

    The words of prose (``Show commit logs``) are not: ``commit`` alone on
    a line of an example is no definition of it; nor is an upper-case word
    in a query of more than :data:`SHORT_QUERY` words (an acronym in a
    sentence: ``Check the GPG signature``), unlike ``TEMPORARY or TEMP``.
    """
    name = word.strip().strip("`'\"")
    if not definition_name(name):
        return False
    if words == 1 or _LOWER_NAME_RE.fullmatch(name) is not None:
        return True
    if _NAME_RE.fullmatch(name.removesuffix("()")) is None or name.islower():
        return False
    return not name.isupper() or words <= SHORT_QUERY


def definition_name(text: str) -> str:
    """A name as it is looked up: lower case, no ``()`` or punctuation around it, one word."""
    name = text.strip().strip("`'\"").removesuffix("()").strip(",:;()[]{}<>").lower()
    return "" if not name or " " in name or not any(c.isalpha() for c in name) else name
