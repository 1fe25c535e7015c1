"""A small OpenAI-compatible chat-completions server on loopback, for tests and benches.

It answers ``POST /v1/chat/completions`` deterministically. By default the
answer is made by ``responder(request_json) -> str`` (echo of the last user
message's first line unless given); a queue of scripted behaviours, consumed
one per request, makes it fail, stall or talk nonsense::

    server.script(("status", 500), ("stall", 3.0), ("garbage", b"not json"),
                  ("empty",), ("text", "NOTHING_TO_PROMOTE"), ("no_choices",))

Every request's JSON body is kept in ``server.requests``.

It also answers ``POST /v1/embeddings``: a word-hashing vector per input
(texts sharing words are close; :func:`word_vector`), unless a scripted
step says otherwise: the ``status``/``stall``/``garbage`` steps above, and
``("count", n)`` (n vectors whatever was asked), ``("dim", n)`` (vectors of
n numbers), ``("strings",)`` (words where numbers belong), ``("unknown_model",)``
(HTTP 404 naming the model, as Ollama and vLLM answer).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _echo(request: dict) -> str:
    users = [m["content"] for m in request.get("messages", []) if m.get("role") == "user"]
    return (users[-1].splitlines() or [""])[0] if users else "ok"


class LoopbackLLM:
    """Run the server in a thread: ``with LoopbackLLM() as llm: llm.base_url``."""

    def __init__(self, responder=None):
        self.responder = responder or _echo
        self.requests: list[dict] = []
        self._script: deque = deque()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                embeddings = self.path.rstrip("/").endswith("/embeddings")
                if not embeddings and not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": "not found"}')
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._send(400, b'{"error": "bad json"}')
                    return
                with owner._lock:
                    owner.requests.append(body)
                    step = owner._script.popleft() if owner._script else None
                (owner._embeddings if embeddings else owner._answer)(self, body, step)

            def _send(self, status, payload, content_type="application/json"):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except OSError:
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *steps) -> None:
        """Queue behaviours for the next requests, one each."""
        with self._lock:
            self._script.extend(steps)

    def unscript(self) -> None:
        """Drop the queued behaviours not used yet: the next requests are answered plainly."""
        with self._lock:
            self._script.clear()

    def env(self, model: str = "loopback-test") -> dict:
        """The settings that point minara at this server."""
        return {"MINARA_LLM_BASE_URL": self.base_url, "MINARA_LLM_MODEL": model,
                "MINARA_LLM_TIMEOUT_S": "2", "MINARA_LLM_RETRIES": "0"}

    def _answer(self, handler, body: dict, step) -> None:
        kind = step[0] if step else "respond"
        if kind == "status":
            handler._send(step[1], json.dumps({"error": {"message": "scripted"}}).encode())
            return
        if kind == "garbage":
            handler._send(200, step[1] if len(step) > 1 else b"\x00nonsense{", "text/plain")
            return
        if kind == "trickle":  # ("trickle", interval_s, n_bytes): one byte per interval
            _trickle(handler, step[1], step[2])
            return
        if kind == "huge":  # ("huge", n_bytes): a body far over any answer, sent fast
            _huge(handler, step[1])
            return
        if kind == "no_choices":
            handler._send(200, json.dumps({"id": "x", "choices": []}).encode())
            return
        if kind == "stall":
            time.sleep(step[1])
            text = step[2] if len(step) > 2 else "late"
        elif kind == "empty":
            text = ""
        elif kind == "text":
            text = step[1]
        else:
            text = self.responder(body)
        payload = {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion",
                   "model": body.get("model", ""),
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": text}}],
                   "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}
        handler._send(200, json.dumps(payload).encode())

    def _embeddings(self, handler, body: dict, step) -> None:
        kind = step[0] if step else "respond"
        if kind in ("status", "garbage", "trickle", "huge"):
            self._answer(handler, body, step)
            return
        if kind == "unknown_model":
            message = f"model \"{body.get('model')}\" not found, try pulling it first"
            handler._send(404, json.dumps({"error": {"message": message}}).encode())
            return
        if kind == "stall":
            time.sleep(step[1])
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        dim = step[1] if kind == "dim" else EMBED_DIM
        if kind == "count":
            texts = (texts * step[1])[:step[1]]
        vectors: list = [word_vector(t, dim) for t in texts]
        if kind == "strings":
            vectors = [["a"] * dim for _ in texts]
        payload = {"object": "list", "model": body.get("model", ""),
                   "data": [{"object": "embedding", "index": i, "embedding": v}
                            for i, v in enumerate(vectors)],
                   "usage": {"prompt_tokens": 0, "total_tokens": 0}}
        handler._send(200, json.dumps(payload).encode())

    def start(self) -> LoopbackLLM:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> LoopbackLLM:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


#: Numbers in a loopback embedding.
EMBED_DIM = 64


def word_vector(text: str, dim: int = EMBED_DIM) -> list[float]:
    """A unit vector of ``text``'s words hashed into ``dim`` buckets (a stand-in model)."""
    out = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        if word in ("query", "passage"):
            continue
        out[int(hashlib.md5(word.encode()).hexdigest(), 16) % dim] += 1.0
    norm = math.sqrt(sum(x * x for x in out)) or 1.0
    out[0] += 0.0 if any(out) else 1.0
    return [x / norm for x in out]


def _trickle(handler, interval: float, n_bytes: int) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(n_bytes))
    handler.end_headers()
    try:
        for _ in range(n_bytes):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(interval)
    except OSError:
        pass


def _huge(handler, n_bytes: int) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(n_bytes))
    handler.end_headers()
    block = b" " * 65536
    try:
        for _ in range(n_bytes // len(block)):
            handler.wfile.write(block)
    except OSError:
        pass
