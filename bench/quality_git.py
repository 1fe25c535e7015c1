"""Search quality on a second real corpus, not tuned on: git's manual pages.

Corpus: the ``git*`` manual pages installed with git (``/usr/share/man``),
rendered as text by ``man`` and written one Markdown file per page (the
upper-case lines of a manual page become headings). Queries: each page's
one-line description from its NAME section ("Record changes to the
repository" -> ``git-commit``), which is removed from the page, so a
query must be answered by the rest of the page. Printed side by side, in
one run: SQLite FTS5 BM25 over whole pages (the baseline) and minara
keyword search (one hit per page), MRR@10 and recall@10.

Usage::

    python bench/quality_git.py [--work /tmp/minara-quality-git]
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from quality import build_index, commit_workspace, fts5, minara_search, score, timed  # noqa: E402

NAME_LINE = re.compile(r"^\s*(git[\w-]*|gitk|scalar)\s+-\s+(.+)$")


def render(page: str) -> str:
    """The manual page as plain text (no bold or underline)."""
    env = {**os.environ, "MANWIDTH": "100", "MAN_KEEP_FORMATTING": "0"}
    out = subprocess.run(["man", "-P", "cat", "-l", page], capture_output=True, text=True,
                         env=env, check=False).stdout
    return re.sub(r".\x08", "", out)


def convert(ws: Path) -> list[tuple[str, str]]:
    """Write each page as Markdown; return (description, page) pairs."""
    pairs = []
    sources = sorted(glob.glob("/usr/share/man/man[157]/git*.gz"))
    if not sources:
        sys.exit("git's manual pages are not installed")
    for source in sources:
        name = Path(source).name.split(".")[0]
        lines, description, in_name = [f"# {name}", ""], "", False
        for line in render(source).splitlines()[1:-1]:
            if re.match(r"^[A-Z][A-Z0-9 /-]+$", line.strip()) and not line.startswith(" "):
                in_name = line.strip() == "NAME"
                if not in_name:
                    lines += ["", f"## {line.strip().title()}", ""]
                continue
            if in_name:
                found = NAME_LINE.match(line)
                description = found.group(2).strip() if found else description
                continue
            lines.append(line.strip())
        text = "\n".join(lines)
        if len(text) < 200 or not description:
            continue
        (ws / f"{name}.md").write_text(text, encoding="utf-8")
        pairs.append((description, f"{name}.md"))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default="/tmp/minara-quality-git")
    args = parser.parse_args()
    work = Path(args.work)
    ws = work / "ws"
    if not (ws / ".git").exists():
        ws.mkdir(parents=True, exist_ok=True)
        pairs = convert(ws)
        commit_workspace(ws)
        (work / "queries.txt").write_text("\n".join(f"{q}\t{a}" for q, a in pairs))
    pairs = [tuple(line.split("\t")) for line in (work / "queries.txt").read_text().splitlines()]
    pages = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*.md"))
    print(f"corpus: git manual pages ({len(pages)} pages); {len(pairs)} description queries")
    index = build_index(ws, work / "state", None)
    queries, answers = [q for q, _a in pairs], [a for _q, a in pairs]
    baseline = None
    for label, search in (("SQLite FTS5 BM25 (pages)", fts5(ws, pages)),
                          ("minara keyword", minara_search(index, "keyword"))):
        results, ms = timed(label, search, queries)
        mrr, recall = score(results, answers)
        baseline = baseline or mrr
        print(f"  {label:<26} MRR@10 {mrr:.3f}  recall@10 {recall:.3f}  "
              f"({mrr / baseline:.2f}x FTS5)  {ms:.1f} ms/query")


if __name__ == "__main__":
    main()
