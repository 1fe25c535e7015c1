"""Query language, languages, filters, snippets, sections and backlinks."""

import pytest

from minarad.errors import InvalidInput


def paths(hits):
    return [h.path for h in hits]


@pytest.fixture
def corpus(ws, index):
    ws.commit(**{
        "MEMORY.md": ("# Memory\n\n## Facts\n\n- 가상메모리와 운영체제를 공부한다.\n"
                      "- Lives in 東京都.\n\n## Decisions\n\n- Never deploy on Fridays.\n"),
        "memory__2026-03-01-s1.md": "# Journal\n\n메모리를 정리했다. 内存不足 error in PR-1234.\n",
        "wiki__handbook__deploy.md": ("---\ntitle: Deploy handbook\ntags: [ops, release]\n"
                                      "owner: platform team\n---\n# Deploying\n\n"
                                      "Run the deploy script from the release branch.\n\n"
                                      "## Rollback\n\nIf the deploy fails, roll back with "
                                      "`make rollback`. The user_id column stays.\n"
                                      "Notes live in notes-2026-01-05.md.\n"),
        "wiki__handbook__onboarding.md": "# Onboarding\n\nRead [[handbook/deploy]] first.\n",
        "wiki__cooking__bread.md": ("# Bread\n\nKnead the dough, then bake the bread at "
                                    "220 degrees until the crust is brown.\n"),
        "channels__c1__MEMORY.md": "# Channel memory\n\nthe launch code is bananas\n",
        "channels__c2__MEMORY.md": "# Channel memory\n\nbananas are yellow in c2\n",
        "learn__lessons.jsonl": ('{"kind": "lesson", "title": "Run tests first", '
                                 '"detail": "Always run pytest before pushing", '
                                 '"tags": ["ci"]}\n'),
        "learn__errors.jsonl": '{"title": "Flaky deploy", "detail": "deploy timed out"}\n',
    })
    index.catch_up()
    return index


@pytest.mark.parametrize("query, expected", [
    ("메모리", {"MEMORY.md", "memory/2026-03-01-s1.md"}),
    ("東京", {"MEMORY.md"}),
    ("内存", {"memory/2026-03-01-s1.md"}),
])
def test_cjk_words_match_inside_words(corpus, query, expected):
    hits = corpus.search(query)
    assert set(paths(hits)) == expected
    assert all(query in h.snippet.text[a:b] for h in hits for a, b in h.snippet.highlights)


def test_cjk_needs_the_characters_in_order(corpus):
    assert corpus.search("京東") == []


def test_english_matches_whole_words(corpus):
    assert corpus.search("deplo") == []
    assert "wiki/handbook/deploy.md" in paths(corpus.search("deploy"))


@pytest.mark.parametrize("token, path", [
    ("PR-1234", "memory/2026-03-01-s1.md"),
    ("user_id", "wiki/handbook/deploy.md"),
    ("notes-2026-01-05.md", "wiki/handbook/deploy.md"),
    ("2026-01-05", "wiki/handbook/deploy.md"),
    ("deploy.md", "wiki/handbook/deploy.md"),
])
def test_exact_tokens_are_found(corpus, token, path):
    assert paths(corpus.search(token))[0] == path


def test_phrase_needs_words_in_order(corpus):
    assert [h.heading for h in corpus.search('"deploy script"')] == ["Deploying"]
    assert corpus.search('"script deploy"') == []


def test_required_and_excluded_words(corpus):
    assert all("fridays" in h.text.lower() for h in corpus.search("+fridays deploy"))
    excluded = corpus.search("deploy -rollback")
    assert excluded and all("rollback" not in h.text.lower() for h in excluded)
    assert corpus.search("deploy NOT rollback") == excluded


def test_a_command_line_option_is_a_word_to_find_not_one_to_exclude(ws, index):
    ws.commit(**{"wiki__tool.md": "# Tool\n\nPass --dry-run to see what would change.\n",
                 "wiki__boats.md": "# Boats\n\nA dry run on the lake before the race.\n"})
    index.catch_up()
    assert paths(index.search("--dry-run"))[0] == "wiki/tool.md"
    assert paths(index.search("run -dry")) == []


def test_kind_and_path_in_the_query(corpus):
    assert paths(corpus.search("kind:lesson")) == ["learn/lessons.jsonl"]
    assert set(paths(corpus.search("path:wiki/handbook"))) == {
        "wiki/handbook/deploy.md", "wiki/handbook/onboarding.md"}
    assert set(paths(corpus.search("deploy -path:wiki"))) == {"MEMORY.md",
                                                               "learn/errors.jsonl"}


def test_filters(corpus, ws):
    assert paths(corpus.search("deploy", kind="error")) == ["learn/errors.jsonl"]
    assert set(paths(corpus.search("deploy", kind=["wiki", "lesson"]))) == {
        "wiki/handbook/deploy.md", "wiki/handbook/onboarding.md"}
    assert set(paths(corpus.search("deploy", path="wiki/handbook/"))) == {
        "wiki/handbook/deploy.md", "wiki/handbook/onboarding.md"}
    assert len({h.path for h in corpus.search("deploy", limit=1)}) == 1  # one page


def test_since_uses_the_commit_that_last_changed_the_file(corpus, ws):
    first_time = ws.clock
    ws.commit(**{"wiki__cooking__bread.md": "# Bread\n\nbake the bread longer\n"})
    corpus.catch_up()
    hits = corpus.search("bread OR deploy", since=first_time + 1)
    assert paths(hits) == ["wiki/cooking/bread.md"]
    assert corpus.search("bread", since="2999-01-01") == []


def test_channel_files_only_for_that_channel(corpus):
    assert corpus.search("bananas") == []
    assert paths(corpus.search("bananas", channel="c1")) == ["channels/c1/MEMORY.md"]
    assert paths(corpus.search("channel:c2 bananas")) == ["channels/c2/MEMORY.md"]


def test_memory_only(corpus):
    hits = corpus.search("deploy OR tests OR 메모리", memory_only=True, limit=50)
    assert set(paths(hits)) == {"MEMORY.md", "memory/2026-03-01-s1.md",
                                "learn/lessons.jsonl", "learn/errors.jsonl"}


def test_snippets_mark_the_hits(corpus):
    hit = corpus.search("rollback")[0]
    marked = hit.snippet.render("[", "]")
    assert "[rollback]" in marked
    assert all(hit.snippet.text[a:b].lower() == "rollback" for a, b in hit.snippet.highlights)


def test_natural_question_ranks_the_page_with_more_words_first(corpus):
    hits = corpus.search("how long do I bake bread until the crust is brown")
    assert hits[0].path == "wiki/cooking/bread.md"


def test_title_match_ranks_above_body_mention(corpus):
    hits = corpus.search("onboarding")
    assert hits[0].path == "wiki/handbook/onboarding.md"


def test_front_matter_text_is_searchable(corpus):
    assert paths(corpus.search("platform team")) == ["wiki/handbook/deploy.md"]
    assert "wiki/handbook/deploy.md" in paths(corpus.search("release", kind="wiki"))


def test_hits_carry_location(corpus):
    hit = corpus.search("fridays")[0]
    assert (hit.path, hit.heading, hit.kind, hit.role) == (
        "MEMORY.md", "Memory > Decisions", "section", "memory")
    assert (hit.line_start, hit.line_end) == (8, 10)
    assert hit.version is None and hit.score > 0
    assert hit.to_dict()["time"].endswith("Z")


def test_version_lookup_fills_hits(ws, corpus):
    from minarad.index import Index

    index = Index(ws.root, corpus.index_dir, version_of=lambda path: 7)
    assert index.search("fridays")[0].version == 7


def test_get_section_by_heading_and_by_line(corpus):
    assert "Never deploy" in corpus.get_section("MEMORY.md", heading="decisions").text
    assert "東京都" in corpus.get_section("MEMORY.md", line=5).text
    assert corpus.get_section("MEMORY.md", heading="nothing") is None


def test_backlinks(corpus):
    for name in ("handbook/deploy", "wiki/handbook/deploy.md"):
        assert paths(corpus.backlinks(name)) == ["wiki/handbook/onboarding.md"]
    assert corpus.backlinks("wiki/cooking/bread.md") == []


def test_learn_entries_are_documents(corpus):
    hit = corpus.search("pytest")[0]
    assert (hit.path, hit.kind, hit.title, hit.line_start) == (
        "learn/lessons.jsonl", "lesson", "Run tests first", 1)
    assert corpus.search("flaky")[0].kind == "error"


def test_odd_queries_with_words_do_not_raise(corpus):
    for query in ['"unclosed', "kind:", "deploy AND", "((deploy))", "-rollback"]:
        corpus.search(query)


@pytest.mark.slow
@pytest.mark.parametrize("query", ["*", "((", "AND", "\\", "AND OR", "+", "-", "::", '"', "",
                                   "-*"])
def test_queries_without_words_are_refused(corpus, query):
    with pytest.raises(InvalidInput, match="no words to search for") as caught:
        corpus.search(query)
    assert caught.value.code == "empty_query"


def test_queries_without_words_are_refused_before_any_index_exists(ws, index):
    ws.commit(**{"MEMORY.md": "# M\n\nx\n"})
    with pytest.raises(InvalidInput, match="no words"):
        index.search("*")


@pytest.mark.parametrize("query, text", [("가상메모리를", "가상메모리"), ("東京に", "東京"),
                                         ("메모리를", "메모리")])
def test_cjk_particles_and_inflections_still_match(corpus, query, text):
    hits = corpus.search(query)
    assert paths(hits)[:1] == ["MEMORY.md"] or query == "메모리를"
    assert any(h.snippet.text[a:b] == text for h in hits for a, b in h.snippet.highlights)


def test_cjk_ranks_documents_by_how_many_grams_they_hold(ws, index):
    ws.commit(**{"wiki__a.md": "# A\n\n가상메모리와 운영체제\n",
                 "wiki__b.md": "# B\n\n가상현실 장비\n",
                 "wiki__c.md": "# C\n\n東京都に住む\n"})
    index.catch_up()
    assert paths(index.search("가상메모리를")) == ["wiki/a.md"]  # 가상 alone is too little
    assert paths(index.search("東京に住んだ")) == ["wiki/c.md"]
    assert set(paths(index.search("가상"))) == {"wiki/a.md", "wiki/b.md"}
    assert index.search("가상현실을")[0].path == "wiki/b.md"


def test_quoted_cjk_stays_exact(corpus):
    assert corpus.search('"가상메모리를"') == []
    assert corpus.search('"京東"') == []
    assert paths(corpus.search('"가상메모리"')) == ["MEMORY.md"]


def test_unknown_kind_is_refused_with_the_valid_kinds(corpus):
    with pytest.raises(InvalidInput, match="unknown kind 'bogus'") as caught:
        corpus.search("deploy", kind="bogus")
    assert caught.value.code == "unknown_kind"
    assert "lesson" in caught.value.message and "wiki" in caught.value.message
    with pytest.raises(InvalidInput):
        corpus.search("deploy", kind=["wiki", "bogus"])


def test_kinds_of_jsonl_entries_are_valid_kinds(ws, index):
    ws.commit(**{"knowledge__facts.jsonl": '{"kind": "fact", "content": "otters hold hands"}\n'})
    index.catch_up()
    assert "fact" in index.known_kinds()
    assert paths(index.search("otters", kind="fact")) == ["knowledge/facts.jsonl"]


def test_a_title_over_sections_does_not_outrank_the_text(ws, index):
    ws.commit(**{"wiki__ops__deploy.md": ("# Deploy\n\n## Rollback\n\n"
                                           "If the deploy fails, roll back.\n"),
                 "wiki__ops__notes.md": ("# Notes\n\nintro\n\n## Deploy\n\n## Steps\n\n"
                                          "Run the deploy script.\n")})
    index.catch_up()
    hits = index.search("deploy", limit=20)
    assert [h.heading for h in hits if h.path == "wiki/ops/deploy.md"] == ["Deploy > Rollback"]
    assert [h.heading for h in hits if h.path == "wiki/ops/notes.md"] == ["Notes > Steps"]
    assert all(h.snippet.highlights for h in hits)


def test_front_matter_and_bare_headings_are_never_hits(ws, index):
    ws.commit(**{"wiki__boats.md": ("---\ntitle: Boats\ntopic: regatta\n---\n# Boats\n\n"
                                     "## Rigging\n\n## Sails\n\nHoist the mainsail first.\n"),
                 "wiki__club.md": "# Club\n\nMembers meet on Sundays.\n"})
    index.catch_up()
    hits = index.search("regatta", limit=20)
    assert [(h.path, h.heading, h.line_start) for h in hits] == [
        ("wiki/boats.md", "Boats > Sails", 9)]
    assert hits[0].snippet.text == "Hoist the mainsail first."
    hits = index.search("rigging", limit=20)
    assert [(h.path, h.heading) for h in hits] == [("wiki/boats.md", "Boats > Sails")]
    hits = index.search("boats OR sundays OR rigging OR sails", limit=20, per_page=0)
    assert sorted(h.heading for h in hits) == ["Boats > Sails", "Club"]


def test_channel_search_keeps_shared_files(corpus):
    hits = corpus.search("memory OR bananas", channel="c1", limit=50)
    assert "channels/c1/MEMORY.md" in paths(hits) and "MEMORY.md" in paths(hits)
    assert "channels/c2/MEMORY.md" not in paths(hits)


def test_a_reader_sees_a_new_channel_after_the_writer_commits(ws, corpus):
    from minarad.index import Index

    reader = Index(ws.root, corpus.index_dir)
    assert reader.search("kiwis") == []
    ws.commit(**{"channels__c3__MEMORY.md": "# Channel memory\n\nkiwis in c3\n",
                 "wiki__fruit.md": "# Fruit\n\nkiwis for all\n"})
    corpus.catch_up()
    assert paths(reader.search("kiwis")) == ["wiki/fruit.md"]
    assert sorted(paths(reader.search("kiwis", channel="c3"))) == ["channels/c3/MEMORY.md",
                                                                  "wiki/fruit.md"]


def test_limit_counts_pages_each_with_its_best_sections_under_it(ws, index):
    many = "".join(f"## Part {n}\n\notter otter notes {n}\n\n" for n in range(60))
    ws.commit(**{"wiki__many.md": f"# Many\n\n{many}",
                 "wiki__b.md": "# B\n\nAn otter, once, in a long text about rivers and lakes.\n",
                 "wiki__c.md": "# C\n\nRivers, lakes and one otter seen from a boat at dawn.\n",
                 "wiki__d.md": "# D\n\nNothing here.\n"})
    index.catch_up()
    hits = index.search("otter", limit=3)
    assert [h.path for h in hits][:2] == ["wiki/many.md"] * 2
    assert sorted(h.path for h in hits[2:]) == ["wiki/b.md", "wiki/c.md"]
    assert [h.path for h in index.search("otter", limit=3, per_page=1)] == [
        "wiki/many.md", *(h.path for h in hits[2:])]
    every = [h.path for h in index.search("otter", limit=2, per_page=0)]
    found = every.count("wiki/many.md")  # every section of the page that the search found
    assert found >= 50 and every == ["wiki/many.md"] * found + [hits[2].path]
