"""Zero findings on what minarad writes and on real documentation.

The corpus: this project's own sources and docs, ids made by the project's
own functions, everything a real workspace holds after a few real ``minara``
writes (files, ``git log -p``, JSON answers), and the Markdown and
reStructuredText documentation installed on this machine (site-packages,
/usr/share/doc), capped so the test takes seconds.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from minarad.artifacts.models import new_id as new_artifact_id
from minarad.files.keys import new_key
from minarad.knowledge.ids import new_id as new_record_id
from minarad.learn.records import uuid7
from minarad.secrets import scan_text
from minarad.workspace.content import git_blob_id, sha256_hex
from tests.conftest import SHARED, git

ROOT = Path(__file__).resolve().parents[2]
#: Bytes of installed documentation scanned at most (a few seconds).
DOCS_CAP = 30_000_000
DOC_ROOTS = [Path(sys.prefix) / "lib", Path("/usr/share/doc")]
DOC_SUFFIXES = (".md", ".rst", ".rst.txt")


def _findings(paths):
    """``path: finding`` for every finding in the readable text files ``paths``."""
    out = []
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        out += [f"{path}: {f}" for f in scan_text(text, path=str(path))]
    return out


def test_the_projects_own_files():
    tracked = git(ROOT, "ls-files").splitlines()
    paths = [ROOT / p for p in tracked if p.endswith((".py", ".md", ".rst"))]
    paths += sorted(SHARED.rglob("*.md")) if SHARED.is_dir() else []
    assert len(paths) > 100
    assert _findings(paths) == []


def test_ids_the_project_makes():
    lines = []
    for _ in range(5000):
        data = os.urandom(24)
        digest = sha256_hex(data)
        lines.append(" ".join([
            new_record_id("fact"), new_record_id("policy"), uuid7(),
            new_artifact_id("chart"), new_artifact_id("report"), new_key("agent-7", "a.png"),
            git_blob_id(data), digest, hashlib.sha1(data).hexdigest(), digest[:16],
            f"{int.from_bytes(data[:4], 'big')}:{digest}", f"chart://{new_artifact_id('chart')}",
        ]))
    assert scan_text("\n".join(lines)) == []


def test_a_workspace_after_real_writes(minara, ws):
    answers = [
        minara("init", check=0).stdout,
        minara("--json", "memory", "append", "MEMORY.md", "- short answers", check=0).stdout,
        minara("--json", "fact", "propose", "--domain", "infra", "--topic", "deploys", "--content",
               "Deploys happen on Tuesdays.", "--confidence", "0.8", "--as", "agent-a",
               check=0).stdout,
        minara("--json", "remember", "the CI cache is flaky", "--session", "s1", "--as", "agent-a",
               check=0).stdout,
        minara("--json", "wiki", "put", "handbook/refunds", "# Refunds\n\nWithin 30 days.\n",
               check=0).stdout,
        git(ws, "log", "-p", "--all", "--format=fuller"),
        git(ws, "rev-list", "--all", "--objects"),
    ]
    files = [p for p in ws.rglob("*") if p.is_file() and "objects" not in p.parts]
    assert len(files) > 10
    assert _findings(files) == []
    assert [str(f) for text in answers for f in scan_text(text)] == []


def installed_docs(cap: int = DOCS_CAP) -> list[Path]:
    """Distinct Markdown/reST documents installed here, in name order, up to ``cap`` bytes."""
    paths, seen, size = [], set(), 0
    for root in DOC_ROOTS:
        for path in sorted(root.rglob("*")) if root.is_dir() else []:
            if size >= cap:
                return paths
            if not path.name.endswith(DOC_SUFFIXES) or not path.is_file():
                continue
            digest = hashlib.sha256(path.read_bytes()).digest()
            if digest not in seen:
                seen.add(digest)
                paths.append(path)
                size += path.stat().st_size
    return paths


def test_installed_documentation():
    paths = installed_docs()
    if sum(p.stat().st_size for p in paths) < 1_000_000:
        pytest.skip("less than 1 MB of Markdown/reST documentation installed")
    assert _findings(paths) == []
