"""A long ``minara index embed``: progress with an ETA, and a killed run that resumes.

The embeddings come from the loopback server of tests/llm_server.py, slowed
by scripted stalls so that a run lasts long enough to be watched and killed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess

from tests.conftest import MINARA, git, on_a_terminal
from tests.daemon.conftest import wait_until
from tests.llm_server import LoopbackLLM

PARTS = 150


def big_page() -> str:
    return "# Facts\n\n" + "".join(f"## Fact {i}\n\nThe number {i} has a square of {i * i} "
                                   f"and the word w{i}.\n\n" for i in range(PARTS))


def use(minara, server) -> None:
    minara.env.update(MINARA_EMBED_BASE_URL=server.base_url, MINARA_EMBED_MODEL="m",
                      MINARA_EMBED_BATCH="16", MINARA_SEARCH_SEMANTIC_FLOOR="0.1")


def kill_embedding_midway(minara, server) -> None:
    """Start ``minara index embed`` on a slow server and kill -9 it once at least one chunk
    of 64 vectors was committed (a 6th request of 16 is made after it).

    The stalls are dropped after the kill: the next run meets a server at full speed."""
    server.script(*[("stall", 0.3)] * 20)
    run = subprocess.Popen([MINARA, "--json", "index", "embed"], env=minara.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: len(server.requests) >= 6, timeout=120, step=0.05,
                   what="embedding under way")
    finally:
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
        server.unscript()


def test_json_progress_lines_say_done_total_rate_and_eta(minara):
    with LoopbackLLM() as server:
        use(minara, server)
        minara("memory", "set", "notes/facts.md", big_page(), check=0)
        server.script(("stall", 0.3), ("stall", 0.3))  # a rate and an ETA above 0
        proc = minara("--json", "index", "embed", check=0)
    stats = json.loads(proc.stdout)
    lines = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    assert len(lines) >= 2 and all(line["progress"] == "embedding" for line in lines)
    # the bar counts every text embedded: the sections, the pages' titles and summaries
    assert lines[-1]["done"] == lines[-1]["total"] == \
        stats["embedded"] + stats["titles"] + stats["summaries"]
    assert stats["embedded"] > PARTS and stats["titles"] >= 1
    assert lines[-1]["eta_s"] == 0
    early = lines[0]
    assert early["done"] < early["total"] and early["per_second"] > 0 and early["eta_s"] > 0


def test_a_terminal_shows_a_bar_with_rate_and_eta(minara):
    with LoopbackLLM() as server:
        use(minara, server)
        minara("memory", "set", "notes/facts.md", big_page(), check=0)
        proc, shown = on_a_terminal([MINARA, "index", "embed"], minara.env, stream="stderr",
                                    stdout=subprocess.PIPE, text=True)
    assert proc.returncode == 0 and "embedded" in proc.stdout
    text = shown.decode()
    assert "embedding [" in text and "ETA" in text and "/s" in text


def test_a_killed_embed_keeps_its_work_and_the_next_run_resumes(minara, ws, tmp_path):
    with LoopbackLLM() as server:
        use(minara, server)
        minara("memory", "get", "MEMORY.md", check=0)  # the workspace is set up
        for n in range(PARTS // 5):  # 30 pages of 5 facts, committed with git itself
            (ws / "notes").mkdir(exist_ok=True)
            (ws / "notes" / f"f{n}.md").write_text(f"# Page {n}\n\n" + "".join(
                f"## Fact {n}.{i}\n\nThe number {n * 5 + i} is fact w{n}x{i}.\n\n"
                for i in range(5)))
        git(ws, "add", "notes")
        git(ws, "commit", "-q", "-m", "facts")
        kill_embedding_midway(minara, server)
        status = minara.json("index", "status")["embeddings"]
        assert status["embedded_commit"] is None and 0 < status["coverage"] < 1.0
        # searches use what is there meanwhile: a page embedded before the kill is found
        done = placed_pages(tmp_path)
        assert done, "no page was placed before the kill"
        n = int(done[0][len("notes/f"):-len(".md")])
        hits = minara.json("search", "--mode", "semantic", "--no-catch-up",
                           f"The number {n * 5 + 2} is fact w{n}x2.")["results"]
        # (the stand-in server's word-hashing vectors can collide, so found, not first)
        assert done[0] in [hit["path"] for hit in hits]
        before = len(server.requests)
        resumed = minara.json("index", "embed")
        again = sum(len(r["input"]) for r in server.requests[before:])
        # the chunk of 64 texts (sections, titles, summaries) placed before the kill is kept
        assert resumed["reused"] + resumed["titles_reused"] + resumed["summaries_reused"] >= 64
        assert again == resumed["embedded"] + resumed["titles"] + resumed["summaries"]
        assert resumed["embedded"] + resumed["reused"] >= PARTS
        status = minara.json("index", "status")["embeddings"]
        assert status["coverage"] == 1.0 and status["embedded_commit"] is not None


def placed_pages(tmp_path) -> list[str]:
    """The notes pages that have vectors in the store (read with sqlite3 itself)."""
    import sqlite3

    found = list(tmp_path.glob("home/.local/state/minara/embeddings/*/vectors.sqlite3"))
    assert len(found) == 1, found
    conn = sqlite3.connect(found[0])
    try:
        return [row[0] for row in conn.execute(
            "SELECT DISTINCT path FROM vec WHERE path LIKE 'notes/%' ORDER BY path")]
    finally:
        conn.close()


def test_a_page_killed_half_embedded_is_not_embedded_twice(minara):
    """Vectors made for a page not yet finished are kept (pending) for the next run."""
    with LoopbackLLM() as server:
        use(minara, server)
        minara("memory", "set", "notes/facts.md", big_page(), check=0)
        kill_embedding_midway(minara, server)
        resumed = minara.json("index", "embed")
        assert resumed["reused"] + resumed["titles_reused"] + resumed["summaries_reused"] >= 64
        assert resumed["embedded"] + resumed["reused"] > PARTS
        hits = minara.json("search", "--mode", "semantic", "--no-catch-up",
                           "The number 7 has a square of 49 and the word w7.")["results"]
        assert hits and hits[0]["path"] == "notes/facts.md" and "w7" in hits[0]["snippet"]
