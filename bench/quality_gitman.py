"""Search quality on a second real corpus, not tuned on: git's manual pages.

Corpus: Debian's ``git-man`` package (``/usr/share/man/man{1,5,7}/git*``),
each page rendered by ``man`` and written as one Markdown file with front
matter (``title``, ``tags``) as wiki pages often have, its upper-case
headings as ``##`` sections. The one-line summary of each page's NAME
section ("Add file contents to the index") is the query, and the page
(without its NAME section) the answer: a known-item search, page-level.

SQLite FTS5 BM25 over the same whole files is the baseline, in the same run
(see ``bench/quality.py`` for the scoring).

Usage::

    python bench/quality_gitman.py [--work /tmp/minara-quality-gitman]
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

HEADING = re.compile(r"^[A-Z][A-Z0-9 /-]+$")


def render(page: str) -> str:
    """The page as plain text, as ``man`` shows it."""
    env = {**os.environ, "MANWIDTH": "160", "MAN_KEEP_FORMATTING": "0"}
    shown = subprocess.run(["man", "-l", "-E", "UTF-8", page], capture_output=True, env=env,
                           check=True).stdout.decode("utf-8", "replace")
    return subprocess.run(["col", "-bx"], input=shown.encode(), capture_output=True,
                          check=True).stdout.decode("utf-8", "replace")


def convert(page: str) -> tuple[str, str, str] | None:
    """(name, summary, Markdown) of one manual page, or None without a summary."""
    lines = render(page).splitlines()[1:]  # the first line is the page header
    name, summary, out, section = "", "", [], ""
    for line in lines:
        if HEADING.match(line.strip()) and not line.startswith(" "):
            section = line.strip()
            if section != "NAME":
                out += ["", f"## {section.title()}", ""]
            continue
        if section == "NAME":
            if " - " in line and not name:
                name, summary = (part.strip() for part in line.split(" - ", 1))
            continue
        out.append(line.strip())
    if not name or not summary:
        return None
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()
    text = f"---\ntitle: {name}\ntags: git, manual\n---\n# {name}\n\n{body}\n"
    return name, summary, text


def build(ws: Path) -> list[tuple[str, str]]:
    """Write the workspace once; return (query, answer page) pairs."""
    pairs_file = ws.parent / "pairs.txt"
    if not (ws / ".git").exists():
        ws.mkdir(parents=True, exist_ok=True)
        pairs = []
        for page in sorted(glob.glob("/usr/share/man/man[157]/git*")):
            found = convert(page)
            if found is None:
                continue
            name, summary, text = found
            path = f"wiki/{name}.md"
            (ws / path).parent.mkdir(parents=True, exist_ok=True)
            (ws / path).write_text(text, encoding="utf-8")
            pairs.append((summary, path))
        commit_workspace(ws)
        pairs_file.write_text("\n".join(f"{q}\t{a}" for q, a in pairs))
    return [tuple(line.split("\t")) for line in pairs_file.read_text().splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default="/tmp/minara-quality-gitman")
    args = parser.parse_args()
    work = Path(args.work)
    if not glob.glob("/usr/share/man/man1/git-*"):
        sys.exit("git's manual pages are missing: apt-get install git-man")
    pairs = build(work / "ws")
    pages = sorted(p.relative_to(work / "ws").as_posix() for p in (work / "ws").rglob("*.md"))
    print(f"corpus: git manual pages ({len(pages)} pages); {len(pairs)} summary queries")
    index = build_index(work / "ws", work / "state", None)
    queries, answers = [q for q, _a in pairs], [a for _q, a in pairs]
    baseline = None
    for label, search in (("SQLite FTS5 BM25 (pages)", fts5(work / "ws", pages)),
                          ("minara keyword --pages", minara_search(index, "keyword"))):
        results, ms = timed(label, search, queries)
        mrr, recall = score(results, answers)
        baseline = baseline or mrr
        print(f"  {label:<26} MRR@10 {mrr:.3f}  recall@10 {recall:.3f}  "
              f"({mrr / baseline:.2f}x FTS5)  {ms:.1f} ms/query")


if __name__ == "__main__":
    main()
