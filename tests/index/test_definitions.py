"""Definition lines: a page that defines a name on a line of its own ranks above mentions."""

from __future__ import annotations

from minarad.index.definitions import definition_lines, definition_names, names_a_definition
from tests.index.conftest import paths

REFERENCE = """\
Settings of the write-ahead log, one per entry.

wal_buffers (integer)
The amount of shared memory used for WAL data not yet written.

max_wal_size (integer)
The size the log may grow to between automatic checkpoints.

--follow
Continue listing the history of a file beyond renames.

os.path.join(path, *paths)
Join one or more path segments intelligently.
"""


def test_lines_that_open_with_a_name_and_are_explained_below_are_definitions():
    assert definition_lines(REFERENCE) == [
        "wal_buffers (integer)", "max_wal_size (integer)", "--follow",
        "os.path.join(path, *paths)"]
    assert definition_names(REFERENCE) == [
        "wal_buffers", "max_wal_size", "--follow", "os.path.join", "path.join", "join"]


def test_sentences_lists_of_contents_and_code_define_nothing():
    text = ("Deploy on Tuesday\nThe max_wal_size setting is raised.\n"
            "log1p()\nlog2()\nexp()\n\n```\nrun_backup(now)\nsecond line\n```\n"
            "- Refunds are paid by mail\n")
    # prose, a sentence naming a setting, a run of names (a list of contents) but its
    # last line, fenced code: only ``exp()`` is followed by a line that explains it
    assert definition_lines(text) == []
    assert definition_names("- `--dry-run`: shows what would change\nIt changes nothing.\n") \
        == ["--dry-run"]


def test_prose_words_are_not_looked_up_as_names_but_names_and_single_words_are():
    assert not names_a_definition("commit", 3)  # ``Show commit logs``
    assert not names_a_definition("GPG", 6)  # an acronym in a sentence
    assert names_a_definition("commit", 1) and names_a_definition("TEMP", 3)
    assert names_a_definition("max_wal_size", 4) and names_a_definition("os.path.join()", 2)
    assert names_a_definition("PQexecPrepared", 2) and names_a_definition("--follow", 3)


MENTIONS = ("# Checkpoints tuning\n\nRaise max_wal_size when checkpoints come too often; "
            "it is a soft limit. See os.path.join() and --follow too.\n")
#: Other pages, so that a name is as rare as in a real collection.
OTHERS = {f"docs__topic{i}.md": f"# Topic {i}\n\nNotes about subject {i}, with some text.\n"
          for i in range(12)}


def test_the_page_defining_a_name_ranks_above_pages_that_mention_it(ws, index):
    ws.commit(**{"docs__wal-settings.md": "# Write-ahead log\n\n## Settings\n\n" + REFERENCE,
                 "docs__checkpoints.md": MENTIONS, **OTHERS})
    index.catch_up()
    for query in ("max_wal_size", "max_wal_size setting", "os.path.join()", "--follow"):
        assert paths(index.search(query, mode="keyword", per_page=1))[0] == \
            "docs/wal-settings.md", query
