"""Idle connections cannot fill the daemon: a cap, a header time-out, quiet logs."""

from __future__ import annotations

import socket
import time
import urllib.parse

import pytest

from tests.gateway.conftest import TIMEOUT, Gateway

pytestmark = pytest.mark.slow


def _closed_by_server(sock: socket.socket, deadline: float) -> bool:
    sock.settimeout(max(0.05, deadline - time.monotonic()))
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:  # refused at the cap: aborted
        return True
    except TimeoutError:
        return False


def test_idle_connections_are_capped_and_timed_out_and_the_daemon_goes_on(tmp_path):
    gw = Gateway(tmp_path, {"MINARA_HTTP_MAX_CONNECTIONS": "20",
                            "MINARA_HTTP_HEADER_TIMEOUT_S": "1"}).start()
    try:
        url = urllib.parse.urlsplit(gw.url)
        idle = [socket.create_connection((url.hostname, url.port)) for _ in range(80)]
        deadline = time.monotonic() + TIMEOUT
        closed = [_closed_by_server(s, deadline) for s in idle]
        for s in idle:
            s.close()
        assert all(closed), f"{closed.count(False)} idle connection(s) still held"
        assert gw.api.get("/v1/status").status_code == 200
        (gw.ws / "USER.md").write_text("# User\n\nsaved after the flood\n")
        assert "saved after the flood" in gw.wait_committed("USER.md", 2)["text"]
        log = gw.log()
        assert "Traceback" not in log
        assert log.count("connection refused") <= 2 and "connection refused" in log
        assert log.count("no request within") <= 2
    finally:
        gw.stop()
