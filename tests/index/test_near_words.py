"""Words of a query found near each other count for their page; snake_case names are
looked up in sections as written, not by their stems."""

from __future__ import annotations

import dataclasses

from minarad.index.pages import PageWeights
from minarad.index.ranking import RankingSettings
from tests.index.conftest import paths

#: Two pages holding "lines" and "files": one says them together, the other apart
#: (and says "lines" more often).
NEAR_PAGES = {
    "tools__nl.md": "# nl\n\n## Description\n\nWrite each input to standard output with "
                    "the lines of files numbered.\n",
    "tools__diff.md": "# diff\n\n## Description\n\nCompare lines: changed lines are shown. "
                      "Output goes to a terminal or to files.\n",
}


def test_words_near_each_other_rank_their_page_first(ws, index):
    ws.commit(**NEAR_PAGES)
    index.catch_up()
    assert PageWeights().near > 0
    assert paths(index.search("lines of files", mode="keyword", per_page=1)) == [
        "tools/nl.md", "tools/diff.md"]
    # without the nearness weight the page saying "lines" more often comes first
    index.ranking = RankingSettings(pages=dataclasses.replace(PageWeights(), near=0.0))
    assert paths(index.search("lines of files", mode="keyword", per_page=1)) == [
        "tools/diff.md", "tools/nl.md"]


def test_a_snake_case_name_is_not_found_by_the_stems_of_its_words(ws, index):
    ws.commit(**{
        "db__settings.md": "# Settings\n\n## Replication\n\ntrack_commit_timestamp records "
                           "when each transaction was saved.\n",
        "db__notes.md": "# Notes\n\n## Audit\n\nTracking of commits and their timestamps "
                        "is done weekly.\n"})
    index.catch_up()
    # the notes hold track, commit and timestamp only inflected, apart: not the setting
    assert paths(index.search("track_commit_timestamp", mode="keyword")) == ["db/settings.md"]
