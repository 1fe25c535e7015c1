"""A held-back editor save is announced on ``/v1/events`` and shown on the status page."""

from __future__ import annotations

import os

import pytest

from minarad.secrets import fingerprint
from tests.gateway.conftest import EventListener, Gateway, wait_for
from tests.secrets.samples import samples

pytestmark = pytest.mark.slow


def test_the_event_stream_and_status_page_name_a_held_back_save(tmp_path):
    value = next(v for rule, _l, v in samples(9) if rule == "gitlab-token")
    gw = Gateway(tmp_path / "gw").start()
    try:
        with EventListener(gw, "secret_held_back") as heard:
            tmp = gw.ws / "ops.md~"
            tmp.write_text(f"# Ops\n\nrunner token {value}\n")
            os.replace(tmp, gw.ws / "ops.md")  # an editor's atomic save
        assert heard.data, "no secret_held_back event arrived"
        assert heard.data["files"][0]["path"] == "ops.md"
        assert heard.data["files"][0]["findings"] == [
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
