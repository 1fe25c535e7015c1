"""``/v1/learn`` and ``/learn`` list the learn-store lines that were skipped."""

from __future__ import annotations


def test_a_line_that_is_not_a_record_is_listed_not_a_server_error(gateway):
    gateway.cli("memory", "append", "learn/lessons.jsonl", "this is not a record", check=0)
    response = gateway.api.get("/v1/learn")
    assert response.status_code == 200, response.text
    problems = response.json()["problems"]
    assert [(p["path"], p["line"]) for p in problems] == [("learn/lessons.jsonl", 1)]
    assert problems[0]["message"]
    client, _ = gateway.browser_client()
    page = client.get("/learn")
    client.close()
    assert page.status_code == 200 and "Skipped lines" in page.text
    assert "learn/lessons.jsonl:1:" in page.text
