"""Plain git repositories made with the real git CLI, for the git layer's tests."""

from __future__ import annotations

import pytest

from tests.conftest import git

IDENTITY = ("-c", "user.name=someone", "-c", "user.email=someone@example.com")


def commit_files(root, message: str, files: dict) -> str:
    """Write ``files`` (path -> text, None: delete) and commit them with git; return the id."""
    for rel, text in files.items():
        path = root / rel
        if text is None:
            git(root, "rm", "-q", "-r", "--", rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git(root, "add", "--", rel)
    git(root, *IDENTITY, "commit", "-q", "--allow-empty", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo_dir(tmp_path):
    """An empty repository (branch ``main``) made by ``git init``."""
    root = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    return root


@pytest.fixture
def repo(repo_dir):
    """The dulwich repository of ``repo_dir``."""
    from minarad.git.repo import open_repo

    opened = open_repo(repo_dir)
    yield opened
    opened.close()
