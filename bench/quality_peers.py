"""Other Markdown memory tools' keyword rankings on the corpora of ``bench/quality.py``.

Run by an interpreter that has them installed (a separate virtualenv, not
a dependency of minara; memtomem and basic-memory need Python 3.12, and
markdown-memory and memtomem an SQLite that loads extensions: where Python's
cannot, ``pysqlite3-binary`` stands in for it)::

    python3.12 -m venv /tmp/peers
    /tmp/peers/bin/pip install markdown-memory==0.7.13 memtomem==0.6.12 \
        basic-memory==0.24.1 pysqlite3-binary
    python bench/quality.py --peers /tmp/peers/bin/python

``quality.py`` calls ``python quality_peers.py JOB.json WORK [PEERS]`` and
reads, on standard output, ``{corpus: {peer: [[page, ...] per query]}}``
(pages best first, at most 10). Each peer runs in a process of its own per
corpus (a private HOME: basic-memory and memtomem keep their configuration
and database there, and a process that had asked one corpus would answer
another's queries from the first one's database), which indexes its own copy
of the corpus's pages once and answers every query; basic-memory writes
front matter into every page it indexes, which would change the corpus for
FTS5, minara and the other peers. The copy and the peer's index are kept
under ``WORK/CORPUS/PEER`` for the next run, stamped with a digest of the
corpus's pages (a changed corpus is indexed anew); the answers are kept
there too, by a digest of the queries, with the queries (a job asking a
corpus's first queries, ``--peer-queries memtomem:50``, reads them from a
kept run over more). How each peer is asked:

- markdown-memory: its hybrid searcher with the embedder stood in (vectors
  for indexing are a constant; a query's embedding fails), so its documented
  keyword fallback answers: FTS5 BM25 over heading sections (its weights
  5, 3, 1) with its IDF keyword gate. 50 sections asked, first 10 pages kept.
- memtomem: ``mm init --non-interactive --preset minimal`` (BM25 keyword
  search, no embeddings) in a private HOME, ``mm index --force-unsafe`` (its
  secret guard would leave out pages about credentials), then its search
  pipeline (``run_search``) with top_k 50; first 10 pages kept.
- basic-memory: ``basic-memory project add`` and ``reindex`` (no semantic
  search on this host: keyword only) in a private HOME, one index writer at
  a time and full passes (``reindex --full --search``) until every page is in
  its index (see :func:`basic_memory_index`), then its ``grep`` tool (the
  full-text search behind ``bm grep``), 50 results; first 10 pages.

memtomem takes seconds a query on a loaded 2-core machine (its own SQL), so
a first run over the four corpora takes an hour or more; later runs reuse
the kept answers.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

WANTED = 50


def pages(paths: list[str], limit: int = 10) -> list[str]:
    return list(dict.fromkeys(paths))[:limit]


def progress(done: int, queries: list[str]) -> None:
    """A line on standard error every 25 queries (some peers take seconds a query)."""
    if done % 25 == 0 and done:
        print(f"    {done} of {len(queries)} queries", file=sys.stderr, flush=True)


def relative(path: str, ws: Path) -> str:
    p = Path(path)
    try:
        return (p if not p.is_absolute() else p.resolve().relative_to(ws.resolve())).as_posix()
    except ValueError:
        return p.as_posix()


def _sqlite_that_loads_extensions() -> None:
    try:
        import pysqlite3
    except ImportError:
        return
    sys.modules["sqlite3"] = pysqlite3


# -- markdown-memory ---------------------------------------------------------------------

class StandIn:
    """An embedder that cannot embed a query (so the keyword fallback answers)."""

    model_name = "stand-in"
    dimension = 8
    weights_revision = None

    def warm_up(self) -> None:
        pass

    def embed_documents(self, texts):
        return [[1.0] + [0.0] * 7 for _ in texts]

    def embed_query(self, text):
        raise RuntimeError("no embedding model offline")


def _mdmem_db(own: Path):
    import logging

    _sqlite_that_loads_extensions()
    from markdown_memory.db import Database

    logging.disable(logging.CRITICAL)
    db = Database(own / "mdmem.db", embedding_dim=StandIn.dimension)
    if hasattr(db, "initialize"):
        db.initialize()
    return db


def markdown_memory_index(ws: Path, own: Path) -> None:
    _sqlite_that_loads_extensions()  # before markdown_memory imports sqlite3
    from markdown_memory.indexer import Indexer

    Indexer(_mdmem_db(own), StandIn()).index_directory(ws)


def markdown_memory(ws: Path, own: Path, queries: list[str]) -> list[list[str]]:
    db = _mdmem_db(own)
    from markdown_memory.search import HybridSearcher

    searcher = HybridSearcher(db, StandIn())
    out = []
    for done, query in enumerate(queries):
        progress(done, queries)
        try:
            found = searcher.search(query, limit=WANTED)
        except Exception:  # a query it refuses answers nothing
            found = []
        out.append(pages([relative(r.file_path, ws) for r in found]))
    searcher.close()
    return out


# -- memtomem ----------------------------------------------------------------------------

#: ``mm`` with SQLite from pysqlite3-binary where Python's own cannot load extensions
#: (memtomem loads sqlite-vec even without embeddings).
MM_CLI = ("import sys\ntry:\n    import pysqlite3\n    sys.modules['sqlite3'] = pysqlite3\n"
          "except ImportError:\n    pass\nfrom memtomem.cli import cli\nsys.argv[0] = 'mm'\n"
          "sys.exit(cli())")


def memtomem_index(ws: Path, own: Path) -> None:
    for args in (["init", "--non-interactive", "--preset", "minimal", "--memory-dir",
                  str(ws), "--db-path", str(own / "memtomem.db"), "--mcp", "skip"],
                 ["index", "--force-unsafe", str(ws)]):
        # (its secret guard would leave out pages that document credentials)
        subprocess.run([sys.executable, "-P", "-c", MM_CLI, *args], check=True,
                       capture_output=True, cwd=own)


def memtomem(ws: Path, own: Path, queries: list[str]) -> list[list[str]]:
    import asyncio

    _sqlite_that_loads_extensions()
    from memtomem.cli._bootstrap import cli_components
    from memtomem.services.search_service import run_search

    async def ask() -> list[list[str]]:
        out = []
        async with cli_components() as comp:
            for done, query in enumerate(queries):
                progress(done, queries)
                results, _stats, _hints = await run_search(
                    comp.search_pipeline, query=query, top_k=WANTED, record=False,
                    origin="cli")
                out.append(pages([relative(str(r.chunk.metadata.source_file), ws)
                                  for r in results]))
        return out

    os.chdir(own)
    return asyncio.run(ask())


# -- basic-memory ------------------------------------------------------------------------

BM_PROJECT = "bench"


#: One writer at a time: with its default 4 concurrent entity and search-index
#: writers, indexing on a loaded machine outwaits SQLite's 10 s busy timeout
#: ("database is locked") and leaves pages out of the index.
BM_ENV = {"BASIC_MEMORY_INDEX_ENTITY_MAX_CONCURRENT": "1",
          "BASIC_MEMORY_INDEX_METADATA_UPDATE_MAX_CONCURRENT": "1",
          "BASIC_MEMORY_MATERIALIZATION_WORKERS": "1", "BASIC_MEMORY_AUTO_UPDATE": "false"}
#: Full indexing passes at most (each retries every page).
BM_FULL_PASSES = 5


def basic_memory_index(ws: Path, own: Path) -> None:
    """``project add`` and ``reindex``, then full passes until every page is in its index.

    Even with one writer, its background search indexing and the batch's
    writes contend on a loaded machine, and a page whose write outwaits
    SQLite's busy timeout is left out ("database is locked"; a plain
    ``reindex`` does not retry it, a full pass does).
    """
    bm = str(Path(sys.executable).parent / "basic-memory")
    subprocess.run([bm, "project", "add", BM_PROJECT, str(ws)], check=False,  # (or there)
                   capture_output=True, cwd=own)
    subprocess.run([bm, "reindex", "--project", BM_PROJECT], check=True, capture_output=True,
                   cwd=own)
    wanted = sum(1 for _ in ws.rglob("*.md"))
    for _attempt in range(BM_FULL_PASSES):
        indexed = _bm_indexed(own)
        if indexed >= wanted:
            return
        print(f"  basic-memory: {indexed} of {wanted} pages indexed, a full pass",
              file=sys.stderr)
        subprocess.run([bm, "reindex", "--full", "--search", "--project", BM_PROJECT],
                       check=False, capture_output=True, cwd=own)
    if _bm_indexed(own) < wanted:
        raise RuntimeError(f"basic-memory indexed {_bm_indexed(own)} of {wanted} pages "
                           f"(see {own}/home/.basic-memory/basic-memory.log)")


def _bm_indexed(own: Path) -> int:
    import sqlite3

    db = sqlite3.connect(own / "home" / ".basic-memory" / "memory.db")
    try:
        return db.execute("SELECT count(DISTINCT entity_id) FROM search_index WHERE project_id ="
                          " (SELECT id FROM project WHERE name = ?)", (BM_PROJECT,)).fetchone()[0]
    finally:
        db.close()


def basic_memory(ws: Path, own: Path, queries: list[str]) -> list[list[str]]:
    import asyncio

    from basic_memory.mcp.tools import grep

    async def ask() -> list[list[str]]:
        out = []
        for done, query in enumerate(queries):
            progress(done, queries)
            try:
                found = (await grep(query, page_size=WANTED, project=BM_PROJECT))["results"]
            except Exception:  # a query it refuses answers nothing
                found = []
            out.append(pages([r["file_path"] for r in found if r.get("file_path")]))
        return out

    return asyncio.run(ask())


#: name -> (index its copy of the pages, answer queries)
PEERS = {"markdown-memory 0.7.13": (markdown_memory_index, markdown_memory),
         "memtomem 0.6.12": (memtomem_index, memtomem),
         "basic-memory 0.24.1": (basic_memory_index, basic_memory)}


# -- one peer on one corpus, in a process of its own -------------------------------------

def one(name: str, own: Path, queries_file: Path, out_file: Path) -> None:
    """Index ``own/pages`` unless done, answer the queries; write ``{found, seconds}``."""
    index, ask = PEERS[name]
    ws = own / "pages"
    took = {}
    if not (own / "indexed").exists():
        start = time.perf_counter()
        index(ws, own)
        took["index"] = time.perf_counter() - start
        (own / "indexed").touch()
    queries = json.loads(queries_file.read_text())
    start = time.perf_counter()
    found = ask(ws, own, queries)
    took["queries"] = time.perf_counter() - start
    out_file.write_text(json.dumps({"found": found, "seconds": took}))


def corpus_digest(ws: Path, names: list[str]) -> str:
    digest = hashlib.sha256()
    for page in sorted(names):
        digest.update(page.encode() + b"\0" + (ws / page).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def prepare(own: Path, ws: Path, names: list[str]) -> None:
    """The peer's folder for a corpus: its own copy of the pages (no ``.git``), made anew
    (index and answers dropped) when the folder was made for other pages."""
    digest = corpus_digest(ws, names)
    stamp = own / "corpus-digest"
    if own.exists() and (not stamp.exists() or stamp.read_text() != digest):
        shutil.rmtree(own)
    if not stamp.exists():
        for page in names:
            (own / "pages" / page).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ws / page, own / "pages" / page)
        (own / "home").mkdir()
        stamp.write_text(digest)


def run(name: str, spec: dict, own: Path) -> list[list[str]] | None:
    """``name``'s pages per query of ``spec`` (kept in ``own`` by the queries' digest;
    another run asking the same peer the same corpus meanwhile waits, then reuses them)."""
    own.parent.mkdir(parents=True, exist_ok=True)
    with open(own.with_name(own.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _run(name, spec, own)


def _run(name: str, spec: dict, own: Path) -> list[list[str]] | None:
    queries = json.dumps(spec["queries"])
    kept = own / f"found-{hashlib.sha256(queries.encode()).hexdigest()[:16]}.json"
    if kept.exists():
        return json.loads(kept.read_text())["found"]
    prepare(own, Path(spec["ws"]), spec["pages"])
    found = _kept_prefix(own, spec["queries"])
    if found is not None:
        return found
    (own / "queries.json").write_text(queries)
    home = own / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(HOME=str(home), BASIC_MEMORY_HOME=str(home / "basic-memory"), **BM_ENV)
    done = subprocess.run([sys.executable, "-P", __file__, "--one", name, str(own),
                           str(own / "queries.json"), str(own / "answers.json")],
                          env=env, cwd=own, check=False)
    if done.returncode:
        return None
    answers = json.loads((own / "answers.json").read_text())
    took = answers["seconds"]
    print(f"  {name}: {len(spec['queries'])} queries, "
          f"{took['queries'] / max(len(spec['queries']), 1) * 1000:.0f} ms/query"
          + (f"; indexed in {took['index']:.0f}s" if "index" in took else ""), file=sys.stderr)
    kept.write_text(json.dumps({**answers, "queries": spec["queries"]}))
    (own / "answers.json").unlink()
    return answers["found"]


def _kept_prefix(own: Path, queries: list[str]) -> list[list[str]] | None:
    """The answers to ``queries`` read from a kept run that asked them first, and
    more after (``--peer-queries memtomem:50`` after a run of every query: each
    query is asked on its own, so its answer does not depend on the others)."""
    for kept in sorted(own.glob("found-*.json")):
        answers = json.loads(kept.read_text())
        if answers.get("queries", [])[:len(queries)] == queries:
            return answers["found"][:len(queries)]
    return None


def main() -> None:
    if sys.argv[1] == "--one":
        try:
            one(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), Path(sys.argv[5]))
        except (subprocess.CalledProcessError, RuntimeError) as e:
            said = (getattr(e, "stderr", None) or b"").decode(errors="replace")
            sys.stderr.write(f"{e}\n{said[-3000:]}")
            sys.exit(1)
        return
    job = json.loads(Path(sys.argv[1]).read_text())
    work = Path(sys.argv[2])
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    out: dict[str, dict[str, list]] = {}
    for corpus, spec in job.items():
        for name in PEERS:
            if only and not any(name.startswith(o) for o in only):
                continue
            print(f"{corpus}: {name} ...", file=sys.stderr)
            try:
                found = run(name, spec, work / corpus / name.split()[0])
            except Exception:
                traceback.print_exc()
                continue
            if found is not None:
                out.setdefault(corpus, {})[name] = found
    print(json.dumps(out))


if __name__ == "__main__":
    main()
