"""The search page while the embeddings server is down: keyword hits, and a notice saying why."""

from __future__ import annotations

import json

from tests.gateway.conftest import Gateway, wait_for
from tests.llm_server import LoopbackLLM

UNDO = "To undo a database schema change, run the down script of the migration."


def embedded(gw: Gateway) -> int:
    status = json.loads(gw.cli("--json", "index", "status", check=0).stdout)
    return status["embeddings"]["vectors"]


def test_the_search_page_answers_by_keywords_and_says_the_server_is_down(tmp_path):
    with LoopbackLLM() as server:
        gw = Gateway(tmp_path, extra_env=dict(
            MINARA_EMBED_BASE_URL=server.base_url, MINARA_EMBED_MODEL="m",
            MINARA_EMBED_RETRIES="0", MINARA_SEARCH_SEMANTIC_FLOOR="0.1")).start()
        try:
            gw.cli("memory", "set", "notes/a.md", f"# A\n\n{UNDO}\n", check=0)
            wait_for(lambda: embedded(gw) >= 1, "the daemon to embed the note")
            client, _ = gw.browser_client()
            page = client.get("/search", params={"q": "down script", "mode": "hybrid"})
            assert "hybrid search" in page.text and 'id="search-notice"' not in page.text
            server.stop()  # (a query of its own: the last query's vector is kept)
            page = client.get("/search", params={"q": "migration script", "mode": "hybrid"})
            assert page.status_code == 200 and "notes/a.md" in page.text
            assert "keyword search" in page.text
            notice = page.text.split('id="search-notice">')[1].split("</p>")[0]
            assert "unreachable" in notice and "keywords only" in notice
            # the daemon does not ask the stopped server again for every search
            again = client.get("/search", params={"q": "schema change", "mode": "semantic"})
            assert "not asked again" in again.text and "notes/a.md" in again.text
        finally:
            gw.stop()
