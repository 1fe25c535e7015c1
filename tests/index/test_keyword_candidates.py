"""A keyword search over many candidates: pages once each, the same order as explained."""

import time

import pytest

from tests.index.conftest import paths


def _many_pages_with_a_token() -> dict[str, str]:
    """70 notes mentioning ``user_id`` (some twice, some in several sections), a page
    whose heading is the token, one whose title is it in backticks, 100 notes without."""
    notes = {}
    for i in range(70):
        extra = "".join(f"## Part {j}\n\nThe user_id of part {j} is kept.\n\n"
                        for j in range(i % 4))
        notes[f"notes__n{i:02d}.md"] = (f"# Note {i}\n\nThe table keeps user_id {i} "
                                        f"{'and user_id again ' * (i % 3)}for the report.\n\n"
                                        + extra)
    notes["reference__fields.md"] = ("# Fields\n\n## Columns\n\nEvery column.\n\n"
                                     "## user_id\n\nThe owner of the row.\n")
    notes["reference__token.md"] = "# `user_id`\n\nWhat the token is.\n"
    notes.update({f"misc__m{i}.md": f"# Misc {i}\n\nNothing to see here {i}.\n"
                  for i in range(100)})
    return notes


@pytest.fixture
def many(ws, index):
    ws.clock = int(time.time()) - 10 * 86400
    ws.commit(**_many_pages_with_a_token())
    index.catch_up()
    return index


def test_a_token_on_many_pages_gives_ten_pages_each_once_those_it_names_first(many):
    hits = many.search("user_id", mode="keyword")
    pages = list(dict.fromkeys(paths(hits)))
    assert len(pages) == 10
    assert sorted(pages) == sorted(set(pages))
    for page in pages:  # each page's sections together, at most two of them
        found = [i for i, h in enumerate(hits) if h.path == page]
        assert found == list(range(found[0], found[0] + len(found))) and len(found) <= 2
    # the section whose heading is the token, and the page whose title is it, come first
    assert set(pages[:2]) == {"reference/fields.md", "reference/token.md"}
    assert [h.heading for h in hits if h.path == "reference/fields.md"][0] == "Fields > user_id"
    assert all(h.snippet.highlights for h in hits if "user_id" in h.text)


@pytest.mark.parametrize("query", ["user_id", "user_id report", "table", "owner row",
                                   "part 2", "kept"])
def test_a_keyword_search_answers_as_the_explained_search_does(many, query):
    for per_page in (1, 2):
        plain = many.search(query, mode="keyword", per_page=per_page)
        explained = many.search(query, mode="keyword", per_page=per_page, explain=True)
        assert plain and [h.key for h in plain] == [h.key for h in explained]
        # (the recency prior moves with the clock between the two searches)
        assert [h.score for h in plain] == pytest.approx([h.score for h in explained],
                                                         rel=1e-9)
        assert [h.snippet.text for h in plain] == [h.snippet.text for h in explained]


def test_a_section_holding_a_nul_character_is_found_as_any_other(ws, index):
    ws.commit(**{"notes__odd.md": "# Odd\n\n## Inside\n\nA zebra with a \x00 in its line.\n",
                 "notes__plain.md": "# Plain\n\n## Inside\n\nA zebra in its line.\n"})
    index.catch_up()
    hits = {h.path: h for h in index.search("zebra", mode="keyword")}
    assert set(hits) == {"notes/odd.md", "notes/plain.md"}
    odd = hits["notes/odd.md"]
    assert (odd.heading, odd.title, odd.line_start, odd.kind) == ("Odd > Inside", "Odd", 3,
                                                                  "section")
    assert odd.snippet.text.startswith("A zebra with a \x00")
    assert odd.snippet.highlights == ((2, 7),)
