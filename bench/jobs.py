"""The jobs' own cost: promotion over a large learn store, dreaming over many journals.

Promotion: a workspace holds N learn entries (openboa lines) and M evidence
lines. Timed, as medians over rounds:

- ``floor``: reading the three learn files and the evidence and parsing
  every line with ``json.loads`` (what any promotion must at least do);
- ``promote, nothing changed``: :meth:`LearnStore.promote` finding the
  block up to date (no commit);
- ``promote, one change``: one more use makes one entry graduate, and the
  promotion rewrites the block (one commit).

Dreaming: J journals of a few lines each, then one ``run_dream`` against the
loopback LLM of ``tests/llm_server.py``; the time inside the model calls
is measured around the real client, and minara's overhead is the rest.

Run: python bench/jobs.py [--entries 10000] [--evidence 100000] [--journals 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from minarad.learn.records import render_record  # noqa: E402
from minarad.workspace.evidence import render_use  # noqa: E402

MAX_BYTES = 256 * 1024 * 1024


def _lines(entries: int, evidence: int) -> tuple[bytes, bytes, list[str]]:
    ids = [f"0192f0c1-0000-7000-8000-{i:012d}" for i in range(entries)]
    lessons = "\n".join(render_record(
        id=rid, kind="lesson", title=f"lesson {i}", detail=f"detail of lesson {i}", agent="a",
        session=f"s{i % 50}", created_at=f"2026-01-01T00:00:{i % 60:02d}.000Z",
        source_reason="bench", promote=i % 1000 == 0) for i, rid in enumerate(ids)) + "\n"
    uses = "\n".join(render_use(
        id=f"u{j}", learning_id=ids[(j * 7) % entries],
        outcome="success" if j % 3 else "failure",
        created_at="2026-01-02T00:00:00.000Z") for j in range(evidence)) + "\n"
    return lessons.encode(), uses.encode(), ids


def _median(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_promotion(root: str, entries: int, evidence: int, rounds: int) -> None:
    from minarad.learn.promotion import PromotionRule
    from minarad.learn.store import LearnStore
    from minarad.store import Store

    store = Store(os.path.join(root, "ws"), operator="bench", max_file_bytes=MAX_BYTES)
    store.ensure()
    lessons, uses, ids = _lines(entries, evidence)
    with store.transaction(author="bench", source="import") as tx:
        tx.write("learn/lessons.jsonl", lessons)
        tx.write("learn/evidence.jsonl", uses)
    learn = LearnStore(store, author="bench", rule=PromotionRule(10, 0.55))
    learn.promote()  # the explicit promoteToMemory entries go in first

    def floor():
        for rel in ("learn/lessons.jsonl", "learn/corrections.jsonl", "learn/errors.jsonl",
                    "learn/evidence.jsonl", "MEMORY.md"):
            path = os.path.join(store.root, rel)
            if os.path.exists(path) and rel.endswith(".jsonl"):
                with open(path, "rb") as fh:
                    [json.loads(line) for line in fh.read().split(b"\n") if line.strip()]

    base = _median(floor, rounds)
    noop = _median(lambda: learn.promote(), rounds)
    fresh = [rid for rid in ids[1:200] if rid not in ids[::1000]]

    def one_change():
        rid = fresh.pop()
        learn.promote()
        for _ in range(12):  # make one entry graduate: 12 successes in a row
            store.append("learn/evidence.jsonl", render_use(
                id="x", learning_id=rid, outcome="success", created_at="2026-01-03T00:00:00Z"),
                author="bench")

    changed = []
    for _ in range(max(1, rounds // 2)):
        one_change()
        start = time.perf_counter()
        result = learn.promote()
        changed.append(time.perf_counter() - start)
        assert result.commit, "the entry did not graduate"
    print(f"promotion: {entries:,} entries, {evidence:,} evidence lines "
          f"({len(uses) / 1e6:.1f} MB)")
    print(f"  floor (read + json.loads every line)  {base * 1000:8.1f} ms")
    print(f"  promote, nothing changed               {noop * 1000:8.1f} ms  "
          f"({noop / base:.2f}x floor)")
    print(f"  promote, one entry graduates (commit)  {statistics.median(changed) * 1000:8.1f} ms"
          f"  ({statistics.median(changed) / base:.2f}x floor)")
    store.close()


def _write_journals(app, journals: int, tag: str) -> None:
    with app.store.transaction(author="bench", source="import") as tx:
        for i in range(journals):
            day = f"2026-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}"
            tx.append(f"memory/{day}-s{i}.md", f"## 10:00 · cli · turns 1–5 ({tag})\n\n"
                      + "".join(f"- 10:0{t} turn {t}: worked on item {i}.{t}\n"
                                for t in range(5)))


def bench_dream(root: str, journals: int, rounds: int) -> None:
    from minarad.app import Minara
    from minarad.config import load_settings
    from minarad.jobs.dream import run_dream
    from minarad.llm import ChatClient
    from tests.llm_server import LoopbackLLM

    ws = os.path.join(root, "dream-ws")
    with LoopbackLLM(responder=lambda body: "- a durable fact\n- another one") as llm:
        env = {"MINARA_WORKSPACE_DIR": ws, "MINARA_STATE_DIR": os.path.join(root, "state"),
               "MINARA_CONFIG": "", "HOME": root, **llm.env(), "MINARA_LLM_TIMEOUT_S": "30",
               "MINARA_DREAM_MAX_CHARS": "24000"}
        app = Minara(load_settings(env=env))
        app.ensure_set_up()
        spent: list[float] = []

        class TimedClient(ChatClient):
            def complete(self, messages, **kw):
                start = time.perf_counter()
                try:
                    return super().complete(messages, **kw)
                finally:
                    spent.append(time.perf_counter() - start)

        client = TimedClient.from_settings(app.settings)
        _write_journals(app, 3, "warm-up")
        run_dream(app, client=client)  # imports and the first connection, not measured
        totals, own = [], []
        for n in range(rounds):
            _write_journals(app, journals, f"round {n}")
            spent.clear()
            start = time.perf_counter()
            result = run_dream(app, client=client)
            totals.append(time.perf_counter() - start)
            own.append(totals[-1] - sum(spent))
        size = sum(p.end - p.start for p in result.pieces) / 1e3
        total, mine = statistics.median(totals), statistics.median(own)
        print(f"dream: {journals:,} journals with new text ({size:.0f} kB) in {result.calls} "
              f"call(s), one commit; medians of {rounds} runs")
        print(f"  total {total * 1000:8.1f} ms, in the model calls {(total - mine) * 1000:8.1f} "
              f"ms, minara's own {mine * 1000:8.1f} ms ({mine / total:.0%} of the run)")
        start = time.perf_counter()
        again = run_dream(app, client=client)
        print(f"  second run, nothing new: {(time.perf_counter() - start) * 1000:8.1f} ms "
              f"({again.calls} calls)")
        app.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--evidence", type=int, default=100_000)
    parser.add_argument("--journals", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="minara-bench-jobs-")
    try:
        bench_promotion(root, args.entries, args.evidence, args.rounds)
        bench_dream(root, args.journals, args.rounds)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
