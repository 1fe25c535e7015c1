"""The web UI looked at as a person would: at phone (375 px) and desktop (1280 px) width.

Each page is opened in the real Chromium of ``test_browser.py`` at both
widths and checked for what a reader notices: the page does not scroll
sideways, a table header fits its column without a word broken inside,
no text is smaller than 12 px. A screenshot of each page at each width
goes to ``docs/screenshots/<page>-<width>.png`` (the pictures the docs show).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gateway.conftest import wait_for
from tests.gateway.test_browser import _propose, browser, sync_api, tab  # noqa: F401

DOCS_SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
WIDTHS = (375, 1280)
#: The tallest part of a page a screenshot keeps (the PNGs stay small).
SHOT_MAX_HEIGHT = 1400

# What a reader would notice, measured in the page: sideways scrolling, headers wider
# than their column or broken inside a word, text under 12 px.
_LAYOUT_JS = """() => {
  const problems = [];
  const overflow = document.documentElement.scrollWidth - window.innerWidth;
  if (overflow > 1) problems.push("page scrolls sideways by " + overflow + " px");
  const visible = (el) => el.getClientRects().length > 0 &&
    getComputedStyle(el).visibility !== "hidden" && !el.closest(".sr-only, [hidden]");
  for (const th of document.querySelectorAll("th")) {
    if (!visible(th)) continue;
    if (th.scrollWidth > th.clientWidth + 1)
      problems.push("header wider than its column: " + th.textContent.trim());
    const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (tops.size > 1) problems.push("header word broken: " + m[0]);
      }
    }
  }
  for (const el of document.querySelectorAll("body *")) {
    if (!visible(el) || el.closest("svg")) continue;
    const ownText = [...el.childNodes].some((n) => n.nodeType === 3 && n.data.trim());
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (ownText && size < 12)
      problems.push("text at " + size + " px: " + el.textContent.trim().slice(0, 30));
  }
  return problems;
}"""


def look(t, path: str, name: str, *, ready: str | None = None, before=None) -> dict:
    """Open ``path`` at each width, check its layout, save ``name-<width>.png``.

    Returns:
        ``{width: page}`` (the same page, left at the last width).
    """
    page = t.page
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        t.open(path)
        if ready:
            page.wait_for_selector(ready)
        if before:
            before(page, width)
        problems = page.evaluate(_LAYOUT_JS)
        assert problems == [], (path, width, problems)
        shot(page, f"{name}-{width}")
    return page


def shot(page, name: str) -> None:
    """A screenshot of the page's top (at most SHOT_MAX_HEIGHT px tall)."""
    DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    height = min(page.evaluate("document.documentElement.scrollHeight"), SHOT_MAX_HEIGHT)
    page.screenshot(path=str(DOCS_SHOTS / f"{name}.png"), full_page=True,
                    clip={"x": 0, "y": 0, "width": size["width"], "height": height})


# -- the wiki ----------------------------------------------------------------------------


def test_a_titled_wiki_page_shows_its_title_not_its_front_matter(tab, gateway):  # noqa: F811
    gateway.api.put("/v1/workspace/files/wiki/handbook/deploy.md", json={
        "text": "---\ntitle: Deployment handbook\n---\nShip on Tuesdays.\n"})
    page = look(tab.first, "/wiki?name=handbook/deploy", "wiki-page", ready="#page-body")
    assert page.inner_text("h1") == "Deployment handbook"
    body = page.inner_text("#page-body")
    assert "title:" not in body and "Ship on Tuesdays." in body
    assert page.locator("#page-body hr").count() == 0


def test_a_link_with_spaces_creates_the_page_it_names(tab, gateway):  # noqa: F811
    gateway.api.put("/v1/workspace/files/wiki/start.md", json={
        "text": "See [[Ops Overview]] and `[[not a link]]`.\n"})
    page = tab.first.open("/wiki?name=start")
    missing = page.locator("#page-body a", has_text="Ops Overview")
    assert missing.get_attribute("href").startswith("/wiki/new?name=ops-overview")
    assert "[[not a link]]" in page.inner_text("#page-body code")
    missing.click()
    page.wait_for_url("**/wiki/new?name=ops-overview*")
    assert page.input_value("#new-name") == "ops-overview"
    assert page.input_value("#new-title") == "Ops Overview"
    page.fill("#new-text", "What runs where.\n")
    page.click("text=Create page")
    page.wait_for_url("**/wiki?name=ops-overview")
    assert "Start" in page.inner_text("#backlinks")
    page = tab.first.open("/wiki?name=start")
    found = page.locator("#page-body a", has_text="Ops Overview")
    assert found.get_attribute("href") == "/wiki?name=ops-overview"


# -- history and the workspace ------------------------------------------------------------


def test_history_reads_at_desktop_and_phone_width(tab, gateway):  # noqa: F811
    for n in range(3):
        gateway.api.put("/v1/workspace/files/notes/a-rather-long-file-name-for-history.md",
                        json={"text": f"version {n} of a note\n"})
    gateway.cli("--as", "an-agent-with-a-long-name", "memory", "append",
                "notes/a-rather-long-file-name-for-history.md", "- from the CLI", check=0)
    page = look(tab.first, "/history?path=notes/a-rather-long-file-name-for-history.md",
                "history", ready="tbody tr")
    # at phone width each version is a block of labelled lines, not letter-by-letter columns
    page.set_viewport_size({"width": 375, "height": 900})
    row = page.locator("tbody tr").first
    assert row.bounding_box()["width"] > 300
    cells = row.locator("td")
    assert cells.nth(2).bounding_box()["y"] > cells.nth(1).bounding_box()["y"]
    assert cells.nth(2).evaluate("td => getComputedStyle(td, '::before').content") == '"Who"'
    assert "an-agent-with-a-long-name" in cells.nth(2).inner_text()


def test_phone_workspace_shows_the_editor_before_the_file_list(tab, gateway):  # noqa: F811
    for n in range(12):
        gateway.api.put(f"/v1/workspace/files/notes/file-{n}.md", json={"text": f"{n}\n"})

    def editor_first(page, width):
        editor = page.locator("#editor").bounding_box()
        files = page.locator("nav.files").bounding_box()
        if width < 640:
            assert editor["y"] < files["y"], "the file list comes before the editor"
            assert editor["y"] < 900, "the editor is not on the first screen"

    look(tab.first, "/workspace?path=MEMORY.md", "workspace", ready="#editor",
         before=editor_first)
    gateway.api.put("/v1/workspace/files/wiki/tree/leaf.md", json={"text": "A leaf.\n"})
    look(tab.first, "/wiki?name=tree/leaf", "wiki-tree", ready="#page-body", before=lambda p, w:
         w > 640 or p.locator("#page-body").bounding_box()["y"]
         < p.locator("nav.files").bounding_box()["y"] or pytest.fail("wiki rail first"))


# -- status ---------------------------------------------------------------------------------


def test_status_speaks_plainly_and_shows_mcp_sync_and_budgets(tab, gateway):  # noqa: F811
    gateway.api.put("/v1/workspace/files/MEMORY.md", json={"text": "# Memory\n" + "- x\n" * 9000})
    page = look(tab.first, "/status", "status", ready="#daemon")
    text = page.inner_text("main")
    for raw in ("True", "False", "None", "_"):
        assert raw not in text.replace("MINARA_MCP_HTTP_ENABLED", "").replace(
            "--show-token", ""), raw
    for cell in page.locator("main table td").all():
        assert cell.inner_text().strip() or cell.get_attribute("data-label") == "Error"
    assert "State" in page.inner_text("#daemon") and "running" in page.inner_text("#daemon")
    assert "/mcp" in page.inner_text("#mcp") and "off" in page.inner_text("#mcp")
    assert "No remote" in page.inner_text("#no-remotes")
    assert "MEMORY.md" in page.inner_text("#budgets")
    assert "characters" in page.inner_text("#budget-total")


# -- empty states and the conflict dialog -----------------------------------------------------


def test_empty_states_say_what_to_do(tab, gateway):  # noqa: F811
    page = look(tab.first, "/settings/memory", "memory-facts-empty", ready="#facts")
    empty = page.inner_text("#facts")
    if page.locator("#facts li.record").count() == 0:  # (other tests of this module add none)
        assert "No facts yet" in empty and "minara fact propose" in empty
    page = look(tab.first, "/wiki?name=ops/runbook", "wiki-missing", ready="#create-missing")
    assert "No page ops/runbook yet" in page.inner_text("h1")
    page.click("#create-missing")
    page.wait_for_url("**/wiki/new?name=ops/runbook")
    assert page.input_value("#new-name") == "ops/runbook"
    page = tab.first.open("/wiki?name=Ops%20Runbook")
    assert page.get_attribute("#create-missing", "href") == "/wiki/new?name=ops-runbook"


def test_after_refresh_the_header_no_longer_warns(tab, gateway):  # noqa: F811
    gateway.api.put("/v1/workspace/files/notes/refresh.md", json={"text": "start\n"})
    a = tab.first.open("/workspace?path=notes/refresh.md")
    b = tab.make().open("/workspace?path=notes/refresh.md")
    b.wait_for_selector("#editor")
    wait_for(lambda: b.evaluate("document.body.dataset.live") == "on", "the event stream")
    b.fill("#editor", "from B\n")
    a.fill("#editor", "from A\n")
    a.click("#save")
    b.wait_for_selector("#live:has-text('saving will ask')")
    b.click("#save")
    b.wait_for_selector("#conflict[open]")
    b.click("#conflict-refresh")
    b.wait_for_selector("#yours:not([hidden])")
    assert "saving will ask" not in b.inner_text("#live")
    assert b.input_value("#editor") == "from A\n"


# -- the knowledge graph --------------------------------------------------------------------


def test_graph_labels_are_legible_and_a_chosen_node_is_centred(tab, gateway):  # noqa: F811
    ids = [_propose(gateway, "fact", "--domain", domain, "--topic", topic, "--content",
                    f"{topic} in {domain}.") for domain, topic in
           (("ops", "deploys"), ("ops", "backups"), ("billing", "refunds"),
            ("billing", "invoices"), ("support", "tone"), ("support", "hours"))]

    def loaded(page, width):
        wait_for(lambda: int(page.get_attribute("#graph", "data-nodes") or 0) > 6, "the graph")

    page = look(tab.first, "/settings/memory?tab=graph", "memory-graph", before=loaded)
    # labels are drawn at a fixed screen size whatever the zoom the graph opens at
    assert float(page.get_attribute("#graph", "data-label-px")) >= 12
    for fid in (ids[0], ids[4]):
        page.select_option("#node-pick", f"fact:{fid}")
        page.wait_for_selector(f"#sheet[data-node='fact:{fid}']")
        box = page.locator("#graph").bounding_box()
        # a tap on the middle of the view lands on the chosen node (a tap beside closes)
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        assert page.get_attribute("#sheet", "data-node") == f"fact:{fid}"
        assert page.is_visible("#sheet")
    page.mouse.click(box["x"] + 5, box["y"] + 5)
    assert page.is_hidden("#sheet")


# -- search: match mode and role; sign out ----------------------------------------------------


def test_search_offers_modes_and_searches_as_a_role(tab, gateway):  # noqa: F811
    gateway.cli("grant", "set", "support", "payroll", "none", check=0)
    _propose(gateway, "fact", "--domain", "payroll", "--topic", "salaries",
             "--content", "Salaries are paid on the quokkaday.")
    page = tab.first.open("/search")
    # without an embedding model, keyword is the one mode offered, and the page says why
    assert page.locator("#search-modes input").count() == 1
    assert "embedding model" in page.inner_text("#modes-note")
    assert page.locator("#role option").all_inner_texts() == ["general", "support"]
    page.fill("#q", "quokkaday")
    page.click("form.search button[type=submit]")
    page.wait_for_selector("ol.results")
    assert "knowledge/payroll" in page.inner_text("ol.results")
    assert "keyword search as role general" in page.inner_text("#search-used")
    page.select_option("#role", "support")
    page.click("form.search button[type=submit]")
    page.wait_for_selector("#no-results")
    assert "role support" in page.inner_text("#search-used")
    assert page.locator("#role").input_value() == "support"
    look(tab.first, "/search?q=quokkaday", "search", ready="ol.results")


def test_sign_out_ends_this_browsers_session(tab, gateway):  # noqa: F811
    page = tab.first.open("/status")
    page.click("#sign-out")
    page.wait_for_url("**/login?signed_out=1")
    assert "Signed out" in page.inner_text("h1")
    assert "minara ui" in page.inner_text("main")
    response = page.request.get(gateway.url + "/v1/status")
    assert response.status == 401
    tab.first.page.goto(gateway.login_url())  # signed in again for the tests after this one


# -- every other page ---------------------------------------------------------------------------


def test_every_page_reads_at_phone_and_desktop_width(tab, gateway):  # noqa: F811
    for n in (1, 2):
        gateway.api.put("/v1/workspace/files/notes/sweep.md",
                        json={"text": f"# Sweep\n\nversion {n} of a note with a long line "
                                      f"that has to wrap on a phone screen.\n"})
    gateway.cli("--as", "agent-a", "notes", "observe", "deploys are slow on Mondays", check=0)
    gateway.cli("grant", "set", "general", "support", "write", check=0)
    _propose(gateway, "policy", "--domain", "support", "--topic", "tone",
             "--content", "Answer politely.")
    gateway.cli("learn", "add", "lesson", "--title", "Quote sources",
                "--detail", "Name where a fact came from.", check=0)
    for path, name in (("/wiki/new?name=ops-overview&title=Ops%20Overview", "wiki-new"),
                       ("/settings/memory?tab=policies", "memory-policies"),
                       ("/learn", "learn"), ("/agents", "agents"), ("/proposals", "proposals"),
                       ("/version?path=notes/sweep.md&v=1", "version"),
                       ("/diff?path=notes/sweep.md&from=1", "diff")):
        look(tab.first, path, name)


def test_memory_review_acts_as_a_role(tab, gateway):  # noqa: F811
    gateway.cli("grant", "set", "auditor", "secrets", "none", check=0)
    secret = _propose(gateway, "fact", "--domain", "secrets", "--topic", "vault",
                      "--content", "The vault code is elsewhere.")
    page = tab.first.open("/settings/memory")
    assert page.locator(f"li.record[data-id='{secret}']").count() == 1
    page.select_option("#memory-role", "auditor")
    page.click("#act-as button")
    page.wait_for_url("**role=auditor*")
    assert page.locator(f"li.record[data-id='{secret}']").count() == 0
    page.click("a[role=tab]:has-text('Knowledge Graph')")
    page.wait_for_url("**tab=graph&role=auditor")
    wait_for(lambda: int(page.get_attribute("#graph", "data-nodes") or 0) > 0, "the graph")
    options = page.locator("#node-pick option").all_inner_texts()
    assert not any("secrets" in o or "vault" in o for o in options), options
    page = tab.first.open("/settings/memory?tab=graph")
    wait_for(lambda: int(page.get_attribute("#graph", "data-nodes") or 0) > 0, "the graph")
    assert any("vault" in o for o in page.locator("#node-pick option").all_inner_texts())
    look(tab.first, "/settings/memory?role=auditor", "memory-facts", ready="#facts")


def test_the_graph_follows_new_knowledge_live(tab, gateway):  # noqa: F811
    _propose(gateway, "fact", "--domain", "live", "--topic", "first", "--content", "One.")
    page = tab.first.open("/settings/memory?tab=graph")
    wait_for(lambda: int(page.get_attribute("#graph", "data-nodes") or 0) > 0, "the graph")
    wait_for(lambda: page.evaluate("document.body.dataset.live") == "on", "the event stream")
    count = int(page.get_attribute("#graph", "data-nodes"))
    fid = _propose(gateway, "fact", "--domain", "live", "--topic", "second",
                   "--content", "Two, written while the graph was open.")
    wait_for(lambda: int(page.get_attribute("#graph", "data-nodes")) > count, "the new node")
    assert f"fact:{fid}" in page.locator("#node-pick option").evaluate_all(
        "options => options.map((o) => o.value)")


def test_a_wiki_page_follows_a_change_live(tab, gateway):  # noqa: F811
    gateway.api.put("/v1/workspace/files/wiki/live-page.md", json={"text": "First text.\n"})
    page = tab.first.open("/wiki?name=live-page")
    wait_for(lambda: page.evaluate("document.body.dataset.live") == "on", "the event stream")
    gateway.cli("--as", "an-agent", "memory", "append", "wiki/live-page.md", "Added live.",
                check=0)
    def reloaded() -> bool:
        try:
            return "Added live." in page.inner_text("#page-body")
        except sync_api.Error:  # between two documents while it reloads
            return False

    wait_for(reloaded, "the page to reload")


# -- artifacts and uploads ---------------------------------------------------------------------


def test_artifacts_are_listed_by_state_and_open_their_viewer(tab, gateway):  # noqa: F811
    import json

    def make(kind, data=None):
        made = json.loads(gateway.cli("--json", "artifact", "create", kind, "--title",
                                      f"A {kind}", "--session", "s1", check=0).stdout)
        if data is not None:
            gateway.cli("artifact", "complete", made["id"], json.dumps(data), check=0)
        return made

    sheet = make("spreadsheet", {"csvContent": "a,b\n1,2\n"})
    running = make("report")
    gateway.cli("artifact", "materialize", input=f"see {sheet['uri']}", check=0)
    page = look(tab.first, "/artifacts", "artifacts", ready="#artifacts")
    assert page.locator(f"tr[data-id='{running['id']}']").count() == 1
    tab.first.open("/artifacts?state=completed")
    assert page.locator(f"tr[data-id='{running['id']}']").count() == 0
    row = page.locator(f"tr[data-id='{sheet['id']}']")
    assert "completed" in row.inner_text()
    with page.context.expect_page() as viewer:
        row.locator("text=Open viewer").click()
    viewer.value.wait_for_load_state()
    assert "<td>1</td>" in viewer.value.content()
    viewer.value.close()


def test_upload_with_progress_download_and_delete(tab, gateway, tmp_path):  # noqa: F811
    source = tmp_path / "ünï.ÇSV"  # the original name is kept, shown and used on download
    source.write_bytes(b"x,y\n" + b"1,2\n" * 20000)
    page = tab.first.open("/uploads")
    page.set_input_files("#upload-file", str(source))
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#uploads tbody tr")
    row = page.locator("#uploads tbody tr").first
    assert row.locator(".name").inner_text() == "ünï.ÇSV" and "KB" in row.inner_text()
    with page.expect_download() as download:
        row.locator("text=Download").click()
    assert download.value.suggested_filename == "ünï.ÇSV"
    saved = tmp_path / "got.csv"
    download.value.save_as(saved)
    assert saved.read_bytes() == source.read_bytes()
    look(tab.first, "/uploads", "uploads", ready="#uploads")
    asked = []
    page.on("dialog", lambda d: (asked.append(d.message), d.accept()))
    page.locator("#uploads button.delete").first.click()
    page.wait_for_selector("#upload-status:has-text('Deleted ünï.ÇSV.')")
    assert asked == ["Delete ünï.ÇSV? This cannot be undone."]
    assert gateway.api.get("/v1/files").json()["files"] == []
