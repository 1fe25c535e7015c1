"""A bench-only embedder that keeps every vector on disk by the digest of its text.

Embedding the quality corpora takes long on two shared cores; a rerun of
``bench/quality.py`` (another subset, other weights, a rebuilt index) asks
the model only for texts it has never seen. The cache is one SQLite file per
model in a folder (``~/.cache/minara-bench`` unless told), keyed like the
vector store (:func:`minarad.index.vectors.text_hash` of the text), so the
vectors of an earlier bench's store can seed it (:func:`seed_from_store`).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

DEFAULT_FOLDER = Path(os.path.expanduser("~/.cache/minara-bench"))


class CachingEmbedder:
    """``inner``'s vectors, each text embedded once ever (queries and passages apart).

    Args:
        inner: the real :class:`~minarad.index.embedder.Embedder`.
        folder: where the cache file is kept.
    """

    def __init__(self, inner, folder: Path = DEFAULT_FOLDER):
        folder.mkdir(parents=True, exist_ok=True)
        self.inner = inner
        self.name = inner.name
        self.batch = getattr(inner, "batch", 16)
        self.db = sqlite3.connect(folder / f"vectors-{inner.name}.sqlite3")
        self.db.execute("CREATE TABLE IF NOT EXISTS v(side TEXT, hash TEXT, v BLOB,"
                        " PRIMARY KEY (side, hash))")
        self.embedded = 0

    @property
    def dim(self) -> int:
        """Length of a vector."""
        return self.inner.dim

    def query(self, text: str):
        """The query's vector, from the cache when asked before."""
        return self._vectors("query", [text], lambda texts: [self.inner.query(texts[0])])[0]

    def passages(self, texts: list[str]):
        """The passages' vectors, one row each; only unseen texts reach the model."""
        import numpy as np

        rows = self._vectors("passage", texts, self.inner.passages)
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)

    def _vectors(self, side: str, texts: list[str], embed) -> list:
        import numpy as np

        from minarad.index.vectors import text_hash

        digests = [text_hash(t) for t in texts]
        found = {}
        for digest in set(digests):
            row = self.db.execute("SELECT v FROM v WHERE side = ? AND hash = ?",
                                  (side, digest)).fetchone()
            if row is not None:
                found[digest] = np.frombuffer(row[0], dtype=np.float32)
        todo = [i for i, d in enumerate(digests) if d not in found]
        if todo:
            new = embed([texts[i] for i in todo])
            for i, vector in zip(todo, new, strict=True):
                vector = np.asarray(vector, dtype=np.float32).reshape(-1)
                found[digests[i]] = vector
                self.db.execute("INSERT OR REPLACE INTO v VALUES (?, ?, ?)",
                                (side, digests[i], vector.tobytes()))
            self.db.commit()
            self.embedded += len(todo)
        return [found[d] for d in digests]


def seed_from_store(db_path: Path, folder: Path, model: str) -> int:
    """Copy the passage vectors of a vector store's database into the cache; how many."""
    if not db_path.exists():
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    cache = sqlite3.connect(folder / f"vectors-{model}.sqlite3")
    cache.execute("CREATE TABLE IF NOT EXISTS v(side TEXT, hash TEXT, v BLOB,"
                  " PRIMARY KEY (side, hash))")
    source = sqlite3.connect(db_path)
    rows = source.execute("SELECT hash, v FROM vec").fetchall()
    cache.executemany("INSERT OR IGNORE INTO v VALUES ('passage', ?, ?)", rows)
    cache.commit()
    return len(rows)


def warm(index, embedder: CachingEmbedder, titles: bool = True, batch: int = 64) -> int:
    """Embed every section of ``index`` (and each page's title) into ``embedder``'s
    cache ahead of a catch-up, a batch at a time; how many texts were new.

    The texts are those the vector store embeds (its passages; titles alone).
    """
    from minarad.index.embedder import passage_text

    texts: dict[str, None] = {}
    for record in index.engine.all_records():
        if record.kind != "section":
            continue
        texts[passage_text(record.title, record.heading, record.text)] = None
        if titles and record.title.strip():
            texts[record.title.strip()] = None
    todo = list(texts)
    before = embedder.embedded
    for start in range(0, len(todo), batch):
        embedder.passages(todo[start:start + batch])
    return embedder.embedded - before
