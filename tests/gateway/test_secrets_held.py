"""A held-back editor save is announced on ``/v1/events`` and shown on the status page."""

from __future__ import annotations

import json
import os
import threading

import pytest

from minarad.secrets import fingerprint
from tests.gateway.conftest import Gateway, wait_for
from tests.secrets.samples import samples

pytestmark = pytest.mark.slow


def test_the_event_stream_and_status_page_name_a_held_back_save(tmp_path):
    value = next(v for rule, _l, v in samples(9) if rule == "gitlab-token")
    gw = Gateway(tmp_path / "gw").start()
    try:
        got: list[dict] = []
        opened = threading.Event()

        def listen() -> None:
            with gw.api.stream("GET", "/v1/events", timeout=30) as r:
                opened.set()
                event = None
                for line in r.iter_lines():
                    if line.startswith("event: "):
                        event = line[7:]
                    elif line.startswith("data: ") and event == "secret_held_back":
                        got.append(json.loads(line[6:]))
                        return

        thread = threading.Thread(target=listen, daemon=True)
        thread.start()
        assert opened.wait(20)
        tmp = gw.ws / "ops.md~"
        tmp.write_text(f"# Ops\n\nrunner token {value}\n")
        os.replace(tmp, gw.ws / "ops.md")  # an editor's atomic save
        thread.join(30)
        assert got, "no secret_held_back event arrived"
        assert got[0]["files"][0]["path"] == "ops.md"
        assert got[0]["files"][0]["findings"] == [
            {"line": 3, "column": 14, "rule": "gitlab-token",
             "fingerprint": fingerprint("gitlab-token", value)}]
        client, _csrf = gw.browser_client()
        def held_page() -> str | None:
            text = client.get("/status").text
            return text if 'id="held-back"' in text else None

        page = wait_for(held_page, "the status page lists it")
        assert "ops.md" in page and "gitlab-token" in page and value not in page
        assert value not in gw.log()
    finally:
        gw.stop()
