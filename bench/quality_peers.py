"""Other Markdown memory tools' keyword rankings on the corpora of ``bench/quality.py``.

Run by an interpreter that has them installed (a separate virtualenv, not
a dependency of minara; memtomem and basic-memory need Python 3.12, and
markdown-memory and memtomem an SQLite that loads extensions: where Python's
cannot, ``pysqlite3-binary`` stands in for it)::

    python3.12 -m venv /tmp/peers
    /tmp/peers/bin/pip install markdown-memory==0.7.13 memtomem==0.6.12 \
        basic-memory==0.24.1 pysqlite3-binary
    python bench/quality.py --peers /tmp/peers/bin/python

``quality.py`` calls ``python quality_peers.py JOB.json WORK`` and reads, on
standard output, ``{corpus: {peer: [[page, ...] per query]}}`` (pages best
first, at most 10). Each peer indexes its own copy of the corpus's pages
once (kept under WORK: basic-memory writes front matter into every page it
indexes, which would change the corpus for FTS5, minara and the other peers)
and is asked every query offline:

- markdown-memory: its hybrid searcher with the embedder stood in (vectors
  for indexing are a constant; a query's embedding fails), so its documented
  keyword fallback answers: FTS5 BM25 over heading sections (its weights
  5, 3, 1) with its IDF keyword gate. 50 sections asked, first 10 pages kept.
- memtomem: ``mm init --non-interactive --preset minimal`` (BM25 keyword
  search, no embeddings) in a private HOME, ``mm index --force-unsafe`` (its
  secret guard would leave out pages about credentials), then its search
  pipeline (``run_search``) with top_k 50; first 10 pages kept.
- basic-memory: ``basic-memory project add`` and ``reindex`` (no semantic
  search on this host: keyword only) in a private HOME, then its ``grep``
  tool (the full-text search behind ``bm grep``), 50 results; first 10 pages.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import traceback
from pathlib import Path

WANTED = 50


def pages(paths: list[str], limit: int = 10) -> list[str]:
    return list(dict.fromkeys(paths))[:limit]


def relative(path: str, ws: Path) -> str:
    p = Path(path)
    try:
        return (p if not p.is_absolute() else p.resolve().relative_to(ws.resolve())).as_posix()
    except ValueError:
        return p.as_posix()


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


def markdown_memory(ws: Path, work: Path, queries: list[str]) -> list[list[str]]:
    import logging

    _sqlite_that_loads_extensions()
    from markdown_memory.db import Database
    from markdown_memory.indexer import Indexer
    from markdown_memory.search import HybridSearcher

    logging.disable(logging.WARNING)
    work.mkdir(parents=True, exist_ok=True)
    db = Database(work / "mdmem.db", embedding_dim=StandIn.dimension)
    if hasattr(db, "initialize"):
        db.initialize()
    embedder = StandIn()
    Indexer(db, embedder).index_directory(ws)
    searcher = HybridSearcher(db, embedder)
    out = []
    for query in queries:
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


def _sqlite_that_loads_extensions() -> None:
    try:
        import pysqlite3
    except ImportError:
        return
    sys.modules["sqlite3"] = pysqlite3

def memtomem(ws: Path, work: Path, queries: list[str]) -> list[list[str]]:
    import asyncio

    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["HOME"] = str(home)
    os.environ.pop("XDG_CONFIG_HOME", None)
    os.environ.pop("XDG_DATA_HOME", None)
    db = work / "memtomem.db"
    if not db.exists():
        env = {**os.environ, "HOME": str(home)}
        for args in (["init", "--non-interactive", "--preset", "minimal", "--memory-dir",
                      str(ws), "--db-path", str(db), "--mcp", "skip"],
                     ["index", "--force-unsafe", str(ws)]):
            # (its secret guard would leave out pages that document credentials)
            subprocess.run([sys.executable, "-P", "-c", MM_CLI, *args], env=env, check=False,
                           capture_output=True, cwd=work)

    _sqlite_that_loads_extensions()
    from memtomem.cli._bootstrap import cli_components
    from memtomem.services.search_service import run_search

    async def ask() -> list[list[str]]:
        out = []
        async with cli_components() as comp:
            for query in queries:
                results, _stats, _hints = await run_search(
                    comp.search_pipeline, query=query, top_k=WANTED, record=False,
                    origin="cli")
                out.append(pages([relative(str(r.chunk.metadata.source_file), ws)
                                  for r in results]))
        return out

    os.chdir(work)
    return asyncio.run(ask())


# -- basic-memory ------------------------------------------------------------------------

def basic_memory(ws: Path, work: Path, queries: list[str]) -> list[list[str]]:
    import asyncio

    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ.update(HOME=str(home), BASIC_MEMORY_HOME=str(home / "basic-memory"))
    bm = str(Path(sys.executable).parent / "basic-memory")
    project = "bench-" + work.parent.name
    if not (work / "indexed").exists():
        subprocess.run([bm, "project", "add", project, str(ws)], check=False,
                       capture_output=True, cwd=work)
        subprocess.run([bm, "reindex", "--project", project], check=True, capture_output=True,
                       cwd=work)
        (work / "indexed").touch()

    from basic_memory.mcp.tools import grep

    async def ask() -> list[list[str]]:
        out = []
        for query in queries:
            try:
                found = (await grep(query, page_size=WANTED, project=project))["results"]
            except Exception:  # a query it refuses answers nothing
                found = []
            out.append(pages([r["file_path"] for r in found if r.get("file_path")]))
        return out

    return asyncio.run(ask())


def own_copy(ws: Path, to: Path) -> Path:
    """A copy of the corpus's pages for one peer (made once; no ``.git``)."""
    if not to.exists():
        shutil.copytree(ws, to.with_name(to.name + ".new"), ignore=shutil.ignore_patterns(".git"))
        to.with_name(to.name + ".new").rename(to)
    return to


PEERS = {"markdown-memory 0.7.13": markdown_memory, "memtomem 0.6.12": memtomem,
         "basic-memory 0.24.1": basic_memory}


def main() -> None:
    job = json.loads(Path(sys.argv[1]).read_text())
    work = Path(sys.argv[2])
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    out: dict[str, dict[str, list]] = {}
    for corpus, spec in job.items():
        for name, run in PEERS.items():
            if only and not any(name.startswith(o) for o in only):
                continue
            own = work / corpus / name.split()[0]
            try:
                found = run(own_copy(Path(spec["ws"]), own / "pages"), own, spec["queries"])
            except Exception:
                traceback.print_exc()
                continue
            out.setdefault(corpus, {})[name] = found
            print(f"{corpus}: {name} done", file=sys.stderr)
            (work / f"partial-{name.split()[0]}.json").write_text(json.dumps(out))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
