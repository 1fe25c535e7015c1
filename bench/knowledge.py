"""Knowledge at scale: propose, supersede, list and the graph on N facts in D domains.

A workspace of N fact files (default 100,000 in 200 domains) is committed
once; the catalogue is built once. Then, in process: ``propose_fact`` and
``supersede`` wall time (commit + catalogue/graph update), interleaved with
a plain ``Store.write`` of a new file in the same repository (the
baseline), and the same on a small workspace (1,000 facts) to show how
flat the cost stays as the store grows; the catalogue/graph update for one
changed record; and ``minara fact list --domain`` wall time in a real
process against ``minara memory get`` and a bare ``python -c pass``.

Run: python bench/knowledge.py [--facts 100000] [--domains 200] [--ops 30]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from minarad.app import Minara  # noqa: E402
from minarad.config import load_settings  # noqa: E402
from minarad.knowledge.ids import new_ulid  # noqa: E402
from minarad.knowledge.records import KnowledgeRecord, render_record  # noqa: E402

BIN = os.path.dirname(sys.executable)
WORDS = "deploy memory agent cache release review policy tuesday team build test".split()


def make_facts(root: str, facts: int, domains: int) -> None:
    rng = random.Random(7)
    start = 1_700_000_000_000
    for i in range(facts):
        domain = f"d{i % domains:03d}"
        record = KnowledgeRecord(
            kind="fact", id=f"f-{new_ulid(start + i)}", domain=domain,
            topic=f"topic {i % 37}", content=" ".join(rng.choice(WORDS) for _ in range(25)),
            confidence=rng.choice([0.5, 0.6, 0.7, 0.8, 0.9]), scope="workspace",
            author="bench", created="2026-01-01T00:00:00Z", updated="2026-01-01T00:00:00Z")
        full = os.path.join(root, record.path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(render_record(record))


def open_app(root: str, state: str) -> Minara:
    env = {"HOME": os.path.join(state, "home"), "XDG_CONFIG_HOME": os.path.join(state, "cfg"),
           "MINARA_WORKSPACE_DIR": root, "MINARA_STATE_DIR": state,
           "MINARA_AUTHOR": "bench", "MINARA_OPERATOR": "bench"}
    return Minara(load_settings({}, env=env))


def ms(seconds: float) -> float:
    return seconds * 1000


def stats(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"median {ms(statistics.median(ordered)):7.2f} ms  p95 {ms(p95):7.2f} ms"


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def build(tmp: str, name: str, facts: int, domains: int) -> tuple[Minara, str, str]:
    root, state = os.path.join(tmp, name), os.path.join(tmp, name + "-state")
    t = time.perf_counter()
    make_facts(root, facts, domains)
    made = time.perf_counter() - t
    app = open_app(root, state)
    first = timed(app.set_up)
    catalogue = timed(app.knowledge.catch_up)
    print(f"{name}: {facts:,} facts in {domains} domains: files {made:.1f} s, first commit "
          f"{first:.1f} s, catalogue built {catalogue:.1f} s", flush=True)
    return app, root, state


def write_ops(app: Minara, ops: int, tag: str) -> dict[str, list[float]]:
    """Interleave propose, supersede and a plain store write; return each one's times."""
    k, store = app.knowledge, app.store
    rng = random.Random(11)
    times: dict[str, list[float]] = {"propose": [], "supersede": [], "store.write": [],
                                     "graph update": [], "graph (diff)": []}
    domains = k.catalogue.domains()
    for i in range(ops):
        domain = rng.choice(domains)
        times["store.write"].append(timed(lambda: store.write(
            f"notes/{tag}-{i}.md", f"note {i}\n", author="bench")))
        proposed = []
        times["propose"].append(timed(lambda: proposed.append(k.propose_fact(
            domain=domain, topic="bench", content=f"bench fact {tag} {i}", confidence=0.8,
            author="bench"))))
        target = proposed[0].record.id
        times["supersede"].append(timed(lambda: k.supersede(
            target, content=f"bench fact {tag} {i}, corrected", author="bench")))
        # the catalogue/graph update for one change, alone: after a write of the library
        # (it names the files it changed), and after a commit made elsewhere (a tree diff)
        for kind, follow in (("graph update", k.follow), ("graph (diff)", None)):
            record = KnowledgeRecord(kind="fact", id=f"f-{new_ulid()}", domain=domain,
                                     topic="x", content=f"see [[handbook/x]] {target}",
                                     confidence=0.5, scope="workspace")
            with store.transaction(author="bench", source="bench") as tx:
                tx.create(record.path, render_record(record))
            times[kind].append(timed(lambda: follow(tx) if follow else k.catch_up()))
    return times


def cli_wall(env: dict, args: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--domains", type=int, default=200)
    ap.add_argument("--ops", type=int, default=30)
    ap.add_argument("--runs", type=int, default=20, help="CLI runs per command")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="minara-bench-knowledge-")
    try:
        small, _r, _s = build(tmp, "small", 1_000, 10)
        large, root, state = build(tmp, "large", args.facts, args.domains)
        small_times = write_ops(small, args.ops, "s")
        large_times = write_ops(large, args.ops, "l")
        print(f"\nin process, {args.ops} each (interleaved):")
        for name in ("propose", "supersede", "graph update", "graph (diff)", "store.write"):
            base = statistics.median(large_times["store.write"])
            flat = statistics.median(large_times[name]) / statistics.median(small_times[name])
            print(f"  {name:<13} {args.facts:,}: {stats(large_times[name])}   1,000: "
                  f"{stats(small_times[name])}   large/small {flat:.2f}x   "
                  f"vs store.write {statistics.median(large_times[name]) / base:.2f}x")
        domain = f"d{args.domains // 2:03d}"
        t = time.perf_counter()
        graph = large.knowledge.graph(domain=domain)
        print(f"  graph of one domain ({len(graph.nodes)} nodes, {len(graph.edges)} edges): "
              f"{ms(time.perf_counter() - t):.1f} ms")
        large.close()
        small.close()
        env = {**os.environ, "MINARA_WORKSPACE_DIR": root, "MINARA_STATE_DIR": state,
               "HOME": os.path.join(state, "home"), "MINARA_AUTHOR": "bench",
               "XDG_CONFIG_HOME": os.path.join(state, "cfg")}
        minara = os.path.join(BIN, "minara")
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "minara memory get MEMORY.md": [minara, "memory", "get", "MEMORY.md"],
            f"minara fact list --domain {domain}": [minara, "fact", "list", "--domain", domain],
            "  ... --json": [minara, "fact", "list", "--domain", domain, "--json"],
            f"  ... --limit 0 (all {args.facts // args.domains:,})": [
                minara, "fact", "list", "--domain", domain, "--limit", "0"],
            "  ... through click": [minara, "fact", "list", "--domain", domain, "--debug"],
        }
        for argv in commands.values():  # warm byte-code caches and the page cache
            cli_wall(env, argv, 2)
        walls: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):  # interleaved, so load spikes hit every command alike
            for name, argv in commands.items():
                walls[name] += cli_wall(env, argv, 1)
        base = statistics.median(walls["minara memory get MEMORY.md"])
        print(f"\nwall time, {args.runs} runs each, interleaved:")
        for name, samples in walls.items():
            print(f"  {name:<32} {stats(samples)}   vs memory get "
                  f"{statistics.median(samples) / base:.2f}x")
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f} "
              f"({os.cpu_count()} cores)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
