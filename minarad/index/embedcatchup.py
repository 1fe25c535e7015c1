"""Catching the section embeddings up with the search index (and so with git).

The paths that changed between the embedded commit and the index's commit
are read from the index, and only sections whose text is new are embedded (a
renamed or unchanged section reuses its vector); each page's title is
embedded on its own, and so is its summary (its title and first prose,
:mod:`~minarad.index.lead`). A model change embeds everything again. The vectors are
kept by :class:`~minarad.index.vectors.VectorStore`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from minarad.index.embedder import Embedder, passage_text
from minarad.index.lock import try_writer_lock
from minarad.index.lead import summary_text
from minarad.index.vectors import (SUMMARY_LINE, TITLE_LINE, TITLES, VectorStore, section_count,
                                   set_meta, stored_dim, text_hash)

if TYPE_CHECKING:
    import sqlite3

#: Sections embedded per call of the model (when the embedder does not say).
BATCH = 16
#: New vectors committed together: a killed catch-up loses at most these.
CHUNK = 64
#: Seconds between two rewrites of the matrix during a long catch-up.
PUBLISH_SECONDS = 20.0
Progress = Callable[[int, int], None]


@dataclasses.dataclass
class EmbedStats:
    """What one catch-up of the embeddings did.

    ``embedded``, ``reused``, ``removed`` and ``total`` count sections;
    ``titles`` and ``titles_reused`` the page titles embedded and kept,
    ``summaries`` and ``summaries_reused`` the page summaries (their vectors
    are stored beside). Progress counts every text, titles and summaries
    included.
    """

    commit: str | None
    embedded: int = 0
    reused: int = 0
    removed: int = 0
    total: int = 0
    titles: int = 0
    titles_reused: int = 0
    summaries: int = 0
    summaries_reused: int = 0
    busy: bool = False
    model: str = ""

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return dataclasses.asdict(self)


def catch_up_embeddings(index, store: VectorStore, embedder: Embedder,
                        progress: Progress | None = None, full: bool = False,
                        stop: Callable[[], bool] | None = None) -> EmbedStats:
    """Embed what changed between the embedded commit and the index's commit.

    Work is kept as it goes: every :data:`CHUNK` new vectors are committed
    (a killed run resumes where it stopped, reusing them by text), and every
    :data:`PUBLISH_SECONDS` the matrix is rewritten, so searches use what is
    embedded so far. The embedded commit moves only when everything is done.

    Args:
        index: the :class:`~minarad.index.Index` (already caught up).
        store: where the vectors are kept.
        embedder: the model.
        progress: called as ``progress(done, total)`` after each batch.
        full: embed every section again (a rebuild).
        stop: asked between chunks; True ends the run early (what is done is kept).

    Returns:
        What was done; ``busy`` when another process is embedding.
    """
    store.folder.mkdir(parents=True, exist_ok=True)
    with try_writer_lock(store.folder / "writer.lock") as owned:
        if not owned:
            return EmbedStats(None, busy=True, model=embedder.name)
        return _CatchUp(index, store, embedder, progress, stop).run(full)


class _CatchUp:
    """One catch-up of the embeddings, chunk by chunk."""

    def __init__(self, index, store: VectorStore, embedder, progress, stop):
        self.index = index
        self.store = store
        self.embedder = embedder
        self.progress = progress
        self.stop = stop or (lambda: False)
        self.published = time.monotonic()

    def run(self, full: bool) -> EmbedStats:
        store, embedder = self.store, self.embedder
        target = self.index.engine.usable_state().get("commit")
        meta = store.meta()
        if full or meta.get("model") != embedder.name:
            store.clear()
            meta = {}
        stats = EmbedStats(target, model=embedder.name)
        if meta.get("titles") != TITLES:  # stored before page titles or summaries: all pages
            meta = {k: v for k, v in meta.items() if k != "commit"}
        if target is not None and meta.get("commit") == target:
            if store.outdated():  # written before the codes: once, in the current form
                with store.connect(write=True) as conn:
                    store.drop_old_matrices(self._publish(conn))
            stats.total = store.count()
            return stats
        if not meta.get("generation"):
            self.published = 0.0  # nothing searchable yet: publish the first chunk at once
        if meta.get("dim") and hasattr(embedder, "expect_dim"):
            embedder.expect_dim(int(meta["dim"]))
        changed = _changed_records(self.index, meta.get("commit"), target)
        with store.connect(write=True) as conn:
            set_meta(conn, model=embedder.name)  # a resumed run keeps what this one embeds
            conn.commit()
            if changed is None:  # from nothing: every section, old vectors reused by text
                changed = _group_by_path(self.index.engine.all_records())
                gone = {row[0] for row in conn.execute("SELECT DISTINCT path FROM vec")}
                changed.update((path, []) for path in gone - set(changed))
            finished = self._apply(conn, changed, stats)
            generation = self._publish(conn)
            if finished:
                set_meta(conn, commit=target or "", titles=TITLES)
                conn.commit()
            stats.total = section_count(conn)
        if not finished:
            stats.commit = meta.get("commit") or None
        store.drop_old_matrices(generation)
        return stats

    def _apply(self, conn: sqlite3.Connection, changed: dict[str, list],
               stats: EmbedStats) -> bool:
        """Replace the rows of the changed paths, a chunk at a time; False when stopped."""
        rows: dict[str, list] = {}
        known: dict[str, bytes] = {}
        for path, records in changed.items():
            old = conn.execute("SELECT hash, v, line_start FROM vec WHERE path = ?",
                               (path,)).fetchall()
            known.update((digest, vector) for digest, vector, _line in old)
            stats.removed += sum(line >= 0 for *_rest, line in old) if not records else 0
            rows[path] = _page_rows(records)
            for record in records:
                text = passage_text(record.title, record.heading, record.text)
                rows[path].append((record.line_start, text_hash(text), text))
        missing = _reuse(conn, rows, known, stats)
        # paths with something to embed first, in the order their texts are embedded;
        # removals and reuses last (a renamed section's old row stays until its new one is)
        order = sorted(rows, key=lambda p: not any(h in missing for _l, h, _t in rows[p]))
        todo = list(dict.fromkeys(h for p in order for _l, h, _t in rows[p] if h in missing))
        written = 0
        for start in range(0, len(todo), CHUNK):
            part = todo[start:start + CHUNK]
            vectors = _embed(self.embedder, [missing[h] for h in part], self.progress, start,
                             len(todo))
            known.update(zip(part, vectors, strict=True))
            conn.executemany("INSERT OR REPLACE INTO pending(hash, v) VALUES (?, ?)",
                             list(zip(part, vectors, strict=True)))
            while written < len(order) and all(h in known for _l, h, _t in rows[order[written]]):
                self._write(conn, order[written], rows[order[written]], known)
                written += 1
            conn.commit()  # a killed run keeps this chunk (in pending or in place)
            if time.monotonic() - self.published >= PUBLISH_SECONDS:
                self.store.drop_old_matrices(self._publish(conn))
            if start + CHUNK < len(todo) and self.stop():
                return False
        for path in order[written:]:
            self._write(conn, path, rows[path], known)
        conn.execute("DELETE FROM pending")
        conn.commit()
        return True

    @staticmethod
    def _write(conn: sqlite3.Connection, path: str, rows: list, known: dict) -> None:
        """Replace the rows of ``path`` (not committed)."""
        conn.execute("DELETE FROM vec WHERE path = ?", (path,))
        conn.executemany("INSERT INTO vec(path, line_start, hash, v) VALUES (?, ?, ?, ?)",
                         [(path, line, h, known[h]) for line, h, _t in rows])

    def _publish(self, conn: sqlite3.Connection) -> str:
        """Write the matrix of every stored vector; searches use it from now on."""
        dim = stored_dim(conn) or int(self.store.meta().get("dim") or 0)
        generation = self.store.write_matrix(conn, dim)
        set_meta(conn, generation=generation, vectors=str(section_count(conn)),
                  **({"dim": str(dim)} if dim else {}))
        conn.commit()
        self.published = time.monotonic()
        return generation


def _changed_records(index, old: str | None, new: str | None) -> dict[str, list] | None:
    """``path -> records`` of every changed path (None: every path, from nothing)."""
    if old is None or new is None:
        return None
    from minarad.index import gitsource
    from minarad.index.feeding import changes_between

    repo = gitsource.open_repo(index.workspace)
    try:
        if not gitsource.has_commit(repo, old):
            return None
        paths = {change.path for change in changes_between(repo, old, new)}
    finally:
        repo.close()
    return {path: index.engine.records_with("path", path, 100_000) for path in paths}


def _page_rows(records) -> list[tuple[int, str, str]]:
    """The rows of the page title of a file's ``records``, alone (none: not a titled
    page), and of its summary (none: no prose, :func:`~minarad.index.lead.page_lead`)."""
    title = next((r.title.strip() for r in records if r.kind == "section"), "")
    rows = [(TITLE_LINE, text_hash(title), title)] if title else []
    summary = summary_text(records)
    if summary:
        rows.append((SUMMARY_LINE, text_hash(summary), summary))
    return rows


def _group_by_path(records) -> dict[str, list]:
    grouped: dict[str, list] = {}
    for record in records:
        grouped.setdefault(record.path, []).append(record)
    return grouped


def _reuse(conn: sqlite3.Connection, rows: dict[str, list], known: dict,
           stats: EmbedStats) -> dict:
    """``hash -> text`` of the rows no stored vector has; counts the reused ones."""
    missing: dict[str, str] = {}
    kinds: dict[str, int] = {}  # hash -> 0 when a section's text, else TITLE_ or SUMMARY_LINE
    for path_rows in rows.values():
        for line, digest, text in path_rows:
            if line >= 0:
                kinds[digest] = 0
            else:
                kinds.setdefault(digest, line)
            if digest in known:
                _count(stats, line, reused=True)
                continue
            found = conn.execute("SELECT v FROM vec WHERE hash = ? LIMIT 1", (digest,)).fetchone() \
                or conn.execute("SELECT v FROM pending WHERE hash = ?", (digest,)).fetchone()
            if found is not None:
                known[digest] = found[0]
                _count(stats, line, reused=True)
            elif digest not in missing:
                missing[digest] = text
    for digest in missing:
        _count(stats, kinds[digest], reused=False)
    return missing


def _count(stats: EmbedStats, line: int, reused: bool) -> None:
    """Count one text to embed, or whose stored vector is kept (``reused``): a
    section, a page title or a page summary."""
    if line == TITLE_LINE:
        field = "titles_reused" if reused else "titles"
    elif line == SUMMARY_LINE:
        field = "summaries_reused" if reused else "summaries"
    else:
        field = "reused" if reused else "embedded"
    setattr(stats, field, getattr(stats, field) + 1)


def _embed(embedder: Embedder, texts: list[str], progress, done: int = 0,
           todo: int = 0) -> list[bytes]:
    """The vectors of ``texts`` as float32 bytes, in the embedder's batches."""
    out: list[bytes] = []
    step = getattr(embedder, "batch", BATCH)
    for start in range(0, len(texts), step):
        batch = embedder.passages(texts[start:start + step])
        out += [row.tobytes() for row in batch]
        if progress is not None:
            progress(done + min(start + step, len(texts)), todo or len(texts))
    return out
