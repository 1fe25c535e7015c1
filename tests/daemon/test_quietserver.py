"""The daemon's uvicorn server: sleeps while idle, stops when told, dates each response."""

from __future__ import annotations

import socket
import threading
import time
from email.utils import parsedate_to_datetime

import httpx
import uvicorn

from minarad.daemon.quietserver import QuietServer


async def hello(scope, receive, send):
    assert scope["type"] == "http"
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"hi"})


def test_serves_with_a_current_date_and_stops_when_told_from_another_thread():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    server = QuietServer(uvicorn.Config(hello, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            deadline = time.monotonic() + 30
            while not server.started and time.monotonic() < deadline:
                time.sleep(0.02)
            first = client.get("/")
            time.sleep(1.1)  # the date must move with the clock, not stay at start-up's
            second = client.get("/")
        assert first.text == "hi"
        dates = [parsedate_to_datetime(r.headers["date"]) for r in (first, second)]
        assert dates[1] > dates[0]
        assert len(second.headers.get_list("date")) == 1
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
    assert not thread.is_alive()
