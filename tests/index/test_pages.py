"""Pages first: a page is ranked on all of its text, then its best sections show under it."""

from __future__ import annotations

import json

import pytest
import tantivy

from minarad.index import Index
from minarad.index.schema import SCHEMA_VERSION, decode_record, page_id
from tests.index.conftest import paths

#: A page about kayaks (title and body) and a long page naming kayaks once.
KAYAK_PAGES = {
    "wiki__kayak.md": "# Kayak storage\n\nKayaks stay in the boathouse.\n\n"
                      "## Winter\n\nIn winter the kayak hangs on the wall rack.\n\n"
                      "## Repairs\n\nA cracked hull is patched before spring.\n",
    "wiki__club.md": "# Club news\n\n## Members\n\nThe club has forty members.\n\n"
                     "## Storage\n\nOne kayak storage question came up at the meeting, "
                     "nothing was decided.\n\n## Dues\n\nDues are paid in March.\n",
}


def test_a_page_whose_title_and_body_match_ranks_above_one_mention(ws, index):
    ws.commit(**KAYAK_PAGES)
    index.catch_up()
    # the club's one section holds both words close together; the kayak page is about them
    assert paths(index.search("kayak storage", mode="keyword", per_page=1)) == [
        "wiki/kayak.md", "wiki/club.md"]


def test_limit_gives_that_many_distinct_pages_with_their_best_sections(ws, index):
    notes = {f"notes__otter{i}.md": f"# Otter {i}\n\nOtters swim.\n\n## Food\n\n"
                                    f"Otters eat fish {i}.\n\n## Sleep\n\nOtters sleep.\n"
             for i in range(6)}
    ws.commit(**notes)
    index.catch_up()
    hits = index.search("otters", mode="keyword", limit=4)
    assert len(set(paths(hits))) == 4
    assert all(paths(hits).count(p) <= 2 for p in set(paths(hits)))
    grouped = paths(hits)
    assert grouped == sorted(grouped, key=grouped.index)  # a page's sections come together


def test_a_page_matching_only_across_sections_is_found_with_a_section(ws, index):
    ws.commit(**{"wiki__trip.md": "# Trip\n\n## Train\n\nThe train leaves at nine.\n\n"
                                  "## Hotel\n\nThe hotel is near the harbour.\n",
                 "wiki__other.md": "# Other\n\nA train set for the children.\n"})
    index.catch_up()
    hits = index.search("train hotel", mode="keyword", per_page=1)
    assert paths(hits)[0] == "wiki/trip.md"
    assert hits[0].heading.endswith(("Train", "Hotel"))


def test_page_documents_are_not_sections(ws, index):
    ws.commit(**KAYAK_PAGES)
    index.catch_up()
    documents = index.documents()
    assert {d["path"] for d in documents} == {"wiki/kayak.md", "wiki/club.md"}
    assert all(d["heading"] for d in documents)  # sections only: each has its heading
    assert index.status().documents == len(documents)
    assert index.get_section("wiki/kayak.md", "Winter").text.strip().startswith("In winter")


def test_a_filter_only_search_lists_sections_not_pages(ws, index):
    ws.commit(**KAYAK_PAGES)
    index.catch_up()
    hits = index.search("path:wiki/kayak", mode="keyword", per_page=0)
    assert hits and all(h.heading for h in hits)


def test_an_index_of_the_previous_schema_is_rebuilt_with_pages(ws, tmp_path):
    ws.commit(**KAYAK_PAGES)
    state_dir = tmp_path / "state" / "index" / "old"
    Index(ws.root, state_dir).catch_up()
    state_file = state_dir / "state.json"
    state = json.loads(state_file.read_text())
    state["schema"] = SCHEMA_VERSION - 1
    state_file.write_text(json.dumps(state))
    index = Index(ws.root, state_dir)
    assert index.search("kayak", mode="keyword") == []  # an old index is not read
    assert index.catch_up().rebuilt
    assert paths(index.search("kayak storage", mode="keyword", per_page=1))[0] == "wiki/kayak.md"


def test_the_page_or_section_the_query_names_ranks_above_pages_that_mention_it(ws, index):
    ws.commit(**{
        "docs__set.md": "# SET DESCRIPTOR\n\nSET DESCRIPTOR fills a descriptor; GET DESCRIPTOR "
                        "reads it back. Get the descriptor, get the values.\n",
        "docs__get.md": "# GET DESCRIPTOR\n\nReads values from an SQL descriptor area into "
                        "host variables, item by item, as the statement lists them.\n",
        "docs__functions.md": "# Functions\n\n## 4.2. `lc_time()`\n\nThe locale of times.\n\n"
                              "## Other\n\nlc_time() and lc_time() are named here twice.\n"})
    index.catch_up()
    assert paths(index.search("GET DESCRIPTOR", mode="keyword", per_page=1))[0] == "docs/get.md"
    hit = index.search("lc_time", mode="keyword", per_page=1)[0]
    assert hit.heading.endswith("`lc_time()`")


def _walks_and_a_wildlife_page() -> dict[str, str]:
    """60 notes whose one section holds both words, 200 notes holding neither, and a
    page that holds both only across its sections (which of them is its best is for
    the index to say)."""
    notes = {f"notes__walk{i}.md": f"# Walk {i}\n\n## Day\n\nOn the walk along the bank we "
                                   f"saw an otter near the river and then the path turned "
                                   f"back toward the village hall for tea {i}.\n"
             for i in range(60)}
    notes.update({f"misc__m{i}.md": f"# Misc {i}\n\nNothing about animals here {i}.\n"
                  for i in range(200)})
    notes["wiki__wildlife.md"] = ("# Wildlife\n\n## Otters\n\nOtter, otter, otter: the otter "
                                  "den.\n\n## Water\n\nThe river is cold.\n\n## Tea\n\n"
                                  "The hall serves tea.\n")
    return notes


def test_a_page_ranked_in_by_its_page_shows_its_best_section_alone(ws, index):
    # the 60 walks fill the section candidates (both words each); the wildlife page
    # ranks by its page, none of its sections being among them
    ws.commit(**_walks_and_a_wildlife_page())
    index.catch_up()
    hits = index.search("otter river", mode="keyword", per_page=2)
    assert paths(hits)[0] == "wiki/wildlife.md"
    shown = [h.heading for h in hits if h.path == "wiki/wildlife.md"]
    alone = index.search("otter river", mode="keyword", path="wiki/wildlife.md", per_page=3)
    assert [h.heading for h in alone][:1] == shown  # its best section, and only that one
    assert {h.heading for h in alone} == {"Wildlife > Otters", "Wildlife > Water"}
    assert hits[0].snippet.highlights  # cut around the words, as any hit's


def _as_previous_schema_wrote_it(state_dir) -> None:
    """Make the index of ``state_dir`` one of schema 12: its data without the ``page``
    field (tantivy's own schema in ``meta.json``, which it reads the data by), its
    state stamped 12."""
    state_file = state_dir / "state.json"
    state = json.loads(state_file.read_text())
    meta_file = state_dir / state["generation"] / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["schema"] = [field for field in meta["schema"] if field["name"] != "page"]
    meta_file.write_text(json.dumps(meta))
    state_file.write_text(json.dumps(dict(state, schema=12)))


def test_an_index_without_the_page_field_is_rebuilt_and_answers(ws, tmp_path):
    ws.commit(**KAYAK_PAGES)
    state_dir = tmp_path / "state" / "index" / "old"
    Index(ws.root, state_dir).catch_up()
    _as_previous_schema_wrote_it(state_dir)
    old = tantivy.Index.open(str(state_dir / json.loads(
        (state_dir / "state.json").read_text())["generation"]))
    searcher = old.searcher()
    address = searcher.search(tantivy.Query.all_query(), 1).hits[0][1]
    with pytest.raises(ValueError):  # what a search of this data would need, and lack
        searcher.fast_field_values("page", [address])
    index = Index(ws.root, state_dir)
    assert SCHEMA_VERSION > 12
    assert index.search("kayak", mode="keyword") == []  # an old index is not read
    stats = index.catch_up()
    assert stats.rebuilt and stats.files_indexed == 2
    assert paths(index.search("kayak storage", mode="keyword", per_page=1)) == [
        "wiki/kayak.md", "wiki/club.md"]
    view = index.engine.reader_view()
    found = view.searcher.search(tantivy.Query.all_query(), 100).hits
    records = [decode_record(view.searcher.doc(a).get_first("record")) for _s, a in found]
    pages = view.searcher.fast_field_values("page", [a for _s, a in found])
    assert pages == [page_id(r.path) for r in records] and len(set(pages)) == 2


def test_page_ids_are_stable_and_tell_paths_apart():
    assert page_id("wiki/kayak.md") == page_id("wiki/kayak.md")
    ids = {page_id(f"wiki/topic{n % 97}/page{n}.md") for n in range(20_000)}
    assert len(ids) == 20_000 and all(-2**63 <= i < 2**63 for i in ids)
