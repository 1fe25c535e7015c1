"""What a user sees once the daemon followed a commit: shared by the writer tests.

Each check reads what the follower left behind (the index status, the wiki
link table, the knowledge catalogue, the remote's branch, the vectors), so
a follower that did not run cannot pass for one that did.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from tests.conftest import MINARA, git
from tests.daemon.conftest import wait_until

#: Generous: outcomes are awaited, never timed.
FOLLOW_TIMEOUT = 20.0


def minara_json(env: dict, *args) -> dict:
    proc = subprocess.run([MINARA, "--json", *args], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, (args, proc.stderr)
    return json.loads(proc.stdout)


def head_of(ws) -> str:
    return git(ws, "rev-parse", "HEAD").strip()


def _meta_commit(path: Path, key: str = "commit") -> str | None:
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def catalogue_commit(env: dict, ws) -> str | None:
    """The commit the knowledge catalogue reflects (read without catching it up)."""
    from minarad.knowledge.catalogue import catalogue_path

    state_dir = env.get("MINARA_STATE_DIR") or Path(env["XDG_STATE_HOME"]) / "minara"
    return _meta_commit(catalogue_path(state_dir, ws))


def link_table_commit(ws) -> str | None:
    """The commit the wiki link table reflects (read without catching it up)."""
    return _meta_commit(Path(ws) / ".git" / "minara" / "wiki.sqlite3")


def history_commit(ws) -> str | None:
    """The commit the history cache reflects (read without catching it up)."""
    return _meta_commit(Path(ws) / ".git" / "minara" / "history.sqlite3", key="tip")


def lagging(env: dict, ws, *, remote: Path | None = None, vectors: bool = False) -> list[str]:
    """The followers not yet at HEAD (empty: every one is)."""
    head = head_of(ws)
    return _lagging_index(env, head, vectors) + _lagging_files(env, ws, head, remote)


def _lagging_index(env: dict, head: str, vectors: bool) -> list[str]:
    """The search index and the vectors, as ``minara index status`` tells (empty: at HEAD)."""
    status = minara_json(env, "index", "status")
    late = []
    if status["indexed_commit"] != head:
        late.append("index")
    if vectors and status["embeddings"]["embedded_commit"] != head:
        late.append("embeddings")
    return late


def _lagging_files(env: dict, ws, head: str, remote: Path | None) -> list[str]:
    """The followers read from their own files and the remote (no process but git)."""
    late = []
    if link_table_commit(ws) != head:
        late.append("wiki links")
    if catalogue_commit(env, ws) != head:
        late.append("catalogue")
    if history_commit(ws) != head:
        late.append("history cache")
    if remote is not None and git(remote, "rev-parse", "main", check=False).strip() != head:
        late.append("remote")
    return late


def wait_followed(env: dict, ws, **kwargs) -> None:
    """Wait until every follower reached HEAD (the message names the late ones)."""
    last: list[list[str]] = [[]]

    def done() -> bool:
        # the files first: a minara process is started only once they are at HEAD
        head = head_of(ws)
        last[0] = _lagging_files(env, ws, head, kwargs.get("remote")) \
            or _lagging_index(env, head, kwargs.get("vectors", False))
        return not last[0]

    try:
        wait_until(done, timeout=FOLLOW_TIMEOUT, step=0.1, what="the followers")
    except AssertionError:
        raise AssertionError(f"not at HEAD after {FOLLOW_TIMEOUT} s: {last[0]}") from None


def searchable(env: dict, words: str) -> list[str]:
    """Paths ``minara search`` returns for ``words``, without catching the index up itself."""
    found = minara_json(env, "search", "--no-catch-up", "--mode", "keyword", words)
    return [hit["path"] for hit in found["results"]]


def facts(env: dict) -> list[str]:
    """Topics of the facts ``minara fact list`` shows."""
    return [row["topic"] for row in minara_json(env, "fact", "list")["records"]]


def backlinks(env: dict, page: str) -> list[str]:
    """Pages the wiki says link to ``page``."""
    got = minara_json(env, "wiki", "get", page)
    return [link["file"] for link in got["backlinks"]]


FACT = """---
id: f-01M8RXNZ1SN0C0XY8BHY4EMF{n:02d}
domain: infra
topic: {topic}
confidence: 0.80
scope: workspace
author: agent-a
agent_role:
session:
created: 2026-12-01T13:46:04Z
updated: 2026-12-01T13:46:04Z
supersedes:
superseded_by:
---
{text}
"""


def fact_file(n: int, topic: str, text: str) -> tuple[str, str]:
    """``(path, text)`` of a fact record written by hand."""
    return f"knowledge/infra/facts/f-01M8RXNZ1SN0C0XY8BHY4EMF{n:02d}.md", FACT.format(
        n=n, topic=topic, text=text)
