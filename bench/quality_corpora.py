"""The corpora of ``bench/quality.py``: real, human-written documentation as Markdown.

Each corpus is a folder of Markdown pages (a git workspace) and a list of
``(query, answer page)`` pairs:

- ``python``: Debian's ``python3-doc`` (Sphinx HTML); queries are the texts
  of internal links, answered by the page they link to.
- ``git``: git's manual pages (``man``); queries are each page's one-line
  description from its NAME section, which is removed from the page.
- ``postgres``: Debian's ``postgresql-doc-15`` (DocBook HTML); queries are
  link texts, as for Python ("Section 7.8" style labels left out).
- ``man``: the manual pages (sections 1, 5 and 8) of common Debian packages
  other than git (:data:`MAN_PACKAGES`: coreutils, util-linux, systemd,
  iproute2, openssl, ...; those not installed are left out), rendered as
  git's are; queries are each page's NAME description, removed from the
  page, as for git. Pages sharing a description keep one, descriptions of
  fewer than 3 words are left out, and a fixed sample of 450 pages is kept
  (about 3,800 texts to embed: 3 minutes at 20 a second). To have every
  page: ``apt-get install man-db`` and the packages of :data:`MAN_PACKAGES`
  (a minimal image whose ``/etc/dpkg/dpkg.cfg.d/`` has ``path-exclude
  /usr/share/man/*`` installs no manual pages: remove that line first).

Plus two small hand-made sets that must stay answered in full: English notes
with inflected words (deploy, deploys, deployed) and Korean, Japanese and
Chinese notes (:mod:`quality_sets`).
"""

from __future__ import annotations

import glob
import html.parser
import os
import random
import re
import subprocess
import sys
from pathlib import Path

BLOCKS = {"p", "li", "dt", "dd", "pre", "td", "th", "div", "blockquote"}
PY_SKIP = re.compile(r"^(genindex|py-modindex|search|whatsnew/|_|download|copyright|license|"
                     r"bugs|about|contents|index\.html)")
PG_SKIP = re.compile(r"^(index|bookindex|release-|legalnotice|biblio|docguide|"
                     r"appendix-obsolete)")
#: Link texts that name a place, not a subject ("Section 7.8", "Table 9.1").
PLACE_LABEL = re.compile(r"^(section|chapter|table|figure|example|appendix|part|step|"
                         r"equation)\s+[\dA-Z.]+$", re.IGNORECASE)


class PageParser(html.parser.HTMLParser):
    """The body of one HTML page: title, headings, text, and internal links.

    ``main``: ``(tag, attribute, value)`` of the element holding the text
    (None: the whole body); ``skip``: div classes left out (navigation);
    ``link_classes``: the classes of an internal link.
    """

    def __init__(self, main=None, skip=(), link_classes=("reference internal",)):
        super().__init__(convert_charrefs=True)
        self.main, self.skip_classes, self.link_classes = main, set(skip), link_classes
        self.depth = 0  # >0 inside the main element
        self.lines: list[str] = []
        self.current: list[str] = []
        self.heading: int | None = None
        self.skip = 0
        self.skipping = 0  # div depth inside a skipped div
        self.title = ""
        self.head_title: list[str] | None = None
        self.links: list[tuple[str, str]] = []
        self.link: list | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "title" and not self.title:
            self.head_title = []
        if self.depth == 0:
            if (self.main is None and tag == "body") or (
                    self.main and tag == self.main[0] and a.get(self.main[1]) == self.main[2]):
                self.depth = 1
            return
        if tag == "div":
            if self.skipping or (set((a.get("class") or "").split()) & self.skip_classes):
                self.skipping += 1
            self.depth += 1
        if self.skipping:
            return
        if tag == "a" and "headerlink" in (a.get("class") or ""):
            self.skip += 1
            return
        if tag == "a" and a.get("href") and any(c in (a.get("class") or "")
                                                for c in self.link_classes):
            self.link = [a["href"], []]
        if re.fullmatch(r"h[1-6]", tag):
            self.flush()
            self.heading = int(tag[1])
        elif tag in BLOCKS or tag == "br":
            self.flush()

    def handle_endtag(self, tag):
        if tag == "title" and self.head_title is not None:
            self.title = " ".join("".join(self.head_title).split())
            self.head_title = None
        if self.depth == 0:
            return
        if tag == "div" and self.skipping:
            self.skipping -= 1
            self.depth -= 1
            return
        if self.skipping:
            return
        if tag == "a":
            if self.skip:
                self.skip -= 1
            elif self.link is not None:
                text = " ".join("".join(self.link[1]).split())
                self.links.append((self.link[0], text))
                self.link = None
            return
        if re.fullmatch(r"h[1-6]", tag):
            text = " ".join("".join(self.current).split())
            if text:
                self.lines += ["", "#" * (self.heading or 1) + " " + text, ""]
            self.current, self.heading = [], None
        elif tag in BLOCKS:
            self.flush()
        if tag == "div":
            self.depth -= 1

    def handle_data(self, data):
        if self.head_title is not None:
            self.head_title.append(data)
        if self.depth and not self.skip and not self.skipping:
            self.current.append(data)
            if self.link is not None:
                self.link[1].append(data)

    def flush(self):
        if self.heading is not None:
            return
        text = " ".join("".join(self.current).split())
        if text:
            self.lines.append(text)
        self.current = []

    def markdown(self) -> str:
        """The page as Markdown; the first heading is the page's title (``#``)."""
        self.flush()
        lines = self.lines
        if not any(line.startswith("# ") for line in lines) and self.title:
            lines = [f"# {self.title}", ""] + lines
        return "\n".join(lines).strip() + "\n"


def convert_html(docs: Path, ws: Path, skip: re.Pattern, parser_args: dict
                 ) -> dict[str, list[tuple[str, str]]]:
    """Write each HTML page as Markdown under ``ws``; return page -> [(target, link text)]."""
    links: dict[str, list[tuple[str, str]]] = {}
    for source in sorted(docs.rglob("*.html")):
        rel = source.relative_to(docs).as_posix()
        if skip.match(rel):
            continue
        parser = PageParser(**parser_args)
        parser.feed(source.read_text(encoding="utf-8", errors="replace"))
        text = parser.markdown()
        if len(text) < 200:
            continue
        page = rel[:-5] + ".md"
        (ws / page).parent.mkdir(parents=True, exist_ok=True)
        (ws / page).write_text(text, encoding="utf-8")
        out = []
        for href, label in parser.links:
            target = href.split("#", 1)[0]
            if not target or "://" in target:
                continue
            resolved = os.path.normpath(os.path.join(os.path.dirname(rel), target))
            if resolved.endswith(".html"):
                out.append((resolved[:-5] + ".md", label))
        links[page] = out
    return links


def link_queries(links, pages: set[str]) -> list[tuple[str, str]]:
    """(query, answer page) pairs from link texts: deduplicated, one answer each."""
    pairs = set()
    for page, found in links.items():
        for target, label in found:
            label = label.strip()
            if target in pages and target != page and len(label) >= 3 and \
                    any(ch.isalpha() for ch in label) and not PLACE_LABEL.match(label):
                pairs.add((label, target))
    answers: dict[str, set[str]] = {}
    for label, target in pairs:
        answers.setdefault(label.lower(), set()).add(target)
    return sorted((label, target) for label, target in pairs if len(answers[label.lower()]) == 1)


def python_docs(ws: Path) -> list[tuple[str, str]]:
    found = sorted(glob.glob("/usr/share/doc/python3*/html/library/os.html"))
    if not found:
        sys.exit("python3-doc is not installed: apt-get install python3-doc")
    docs = Path(found[-1]).parent.parent
    links = convert_html(docs, ws, PY_SKIP, {"main": ("div", "role", "main")})
    return link_queries(links, _pages(ws))


def postgres_docs(ws: Path) -> list[tuple[str, str]]:
    found = sorted(glob.glob("/usr/share/doc/postgresql-doc-*/html/sql-select.html"))
    if not found:
        sys.exit("postgresql-doc is not installed: apt-get install postgresql-doc-15")
    docs = Path(found[-1]).parent
    links = convert_html(docs, ws, PG_SKIP, {"skip": ("navheader", "navfooter", "toc"),
                                             "link_classes": ("xref", "link")})
    return link_queries(links, _pages(ws))


NAME_LINE = re.compile(r"^\s*(git[\w-]*|gitk|scalar)\s+-\s+(.+)$")


def _render_man(page: str) -> str:
    """The manual page as plain text (no bold or underline)."""
    env = {**os.environ, "MANWIDTH": "100", "MAN_KEEP_FORMATTING": "0"}
    out = subprocess.run(["man", "-P", "cat", "-l", page], capture_output=True, text=True,
                         env=env, check=False).stdout
    return re.sub(r".\x08", "", out)


def _man_markdown(source: str, title: str) -> tuple[str, list[str]]:
    """A manual page as Markdown (upper-case lines become headings) without its NAME
    section, and the NAME section's lines."""
    lines, name_lines, in_name = [f"# {title}", ""], [], False
    for line in _render_man(source).splitlines()[1:-1]:
        if re.match(r"^[A-Z][A-Z0-9 /-]+$", line.strip()) and not line.startswith(" "):
            in_name = line.strip() == "NAME"
            if not in_name:
                lines += ["", f"## {line.strip().title()}", ""]
            continue
        if in_name:
            name_lines.append(line)
            continue
        lines.append(line.strip())
    return "\n".join(lines), name_lines


def git_manuals(ws: Path) -> list[tuple[str, str]]:
    """Each git manual page as Markdown (upper-case lines become headings)."""
    pairs = []
    sources = sorted(glob.glob("/usr/share/man/man[157]/git*.gz"))
    if not sources:
        sys.exit("git's manual pages are not installed")
    for source in sources:
        name = Path(source).name.split(".")[0]
        text, name_lines = _man_markdown(source, name)
        description = ""
        for line in name_lines:
            found = NAME_LINE.match(line)
            description = found.group(2).strip() if found else description
        if len(text) < 200 or not description:
            continue
        (ws / f"{name}.md").write_text(text, encoding="utf-8")
        pairs.append((description, f"{name}.md"))
    return pairs


#: The Debian packages whose manual pages (sections 1, 5 and 8) make the ``man``
#: corpus; a package not installed is left out.
MAN_PACKAGES = (
    "coreutils", "util-linux", "findutils", "grep", "sed", "tar", "procps", "iproute2",
    "openssh-client", "systemd", "dpkg", "apt", "e2fsprogs", "mount", "diffutils", "gzip",
    "bzip2", "xz-utils", "bash", "less", "man-db", "passwd", "login", "hostname", "psmisc",
    "bsdutils", "debianutils", "ncurses-bin", "zip", "unzip", "make", "patch", "file", "lsof",
    "strace", "net-tools", "curl", "wget", "openssl")
#: At most this many pages (a fixed sample), so that embedding them takes minutes.
MAN_PAGES = 450
#: A description of fewer words does not make a query ("GNU make").
MAN_WORDS = 3


def man_sources(packages=MAN_PACKAGES) -> list[str]:
    """The manual pages, sections 1, 5 and 8, of the installed ``packages`` (one path
    per page: links resolved; git's pages left out)."""
    found = set()
    for package in packages:
        listed = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True,
                                check=False).stdout.splitlines()
        for path in listed:
            if re.fullmatch(r"/usr/share/man/man[158]/[^/]+\.gz", path) and \
                    not re.match(r"(git|scalar)", Path(path).name):
                found.add(os.path.realpath(path))
    return sorted(p for p in found if os.path.isfile(p))


def _first_paragraph(lines: list[str]) -> str:
    """The lines up to the first blank one after some text, as one line (a word the
    renderer broke with a hyphen made whole)."""
    text = ""
    for line in lines:
        if not line.strip():
            if text:
                break
            continue
        text += line.strip() + " "
    return " ".join(text.replace("\u2010 ", "").split())


def man_pages(ws: Path) -> list[tuple[str, str]]:
    """Debian's manual pages (:data:`MAN_PACKAGES`) rendered as git's are; a page
    ``NAME.SECTION.md`` titled ``NAME(SECTION)``, its query its NAME line's description.

    Pages sharing a description keep only the first (by file name), descriptions
    under :data:`MAN_WORDS` words are left out, and at most :data:`MAN_PAGES` pages
    are kept (a fixed sample of those left).
    """
    sources = man_sources()
    if not sources:
        sys.exit("no manual pages found: apt-get install man-db " + " ".join(MAN_PACKAGES))
    pages: dict[str, tuple[str, str]] = {}  # description (lower case) -> (page, description)
    for source in sorted(sources, key=lambda p: Path(p).name):
        name, section = Path(source).name[:-3].rsplit(".", 1)
        text, name_lines = _man_markdown(source, f"{name}({section})")
        head = _first_paragraph(name_lines)
        description = re.split(r"\s[-\u2010\u2013\u2014]+\s", head, maxsplit=1)[1:]
        if len(text) < 200 or not description or len(description[0].split()) < MAN_WORDS:
            continue
        key = description[0].lower().rstrip(".")
        if key not in pages:
            page = f"{name}.{section}.md"
            (ws / page).write_text(text, encoding="utf-8")
            pages[key] = (page, description[0])
    chosen = sorted(pages.values())
    if len(chosen) > MAN_PAGES:
        kept = set(random.Random(5).sample(range(len(chosen)), MAN_PAGES))
        for i, (page, _d) in enumerate(chosen):
            if i not in kept:
                (ws / page).unlink()
        chosen = [c for i, c in enumerate(chosen) if i in kept]
    return [(description, page) for page, description in chosen]


CORPORA = {"python": python_docs, "git": git_manuals, "postgres": postgres_docs,
           "man": man_pages}


def _pages(ws: Path) -> set[str]:
    return {p.relative_to(ws).as_posix() for p in ws.rglob("*.md")}


def commit_workspace(ws: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=ws, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "corpus"], cwd=ws, check=True, env=env)


def _restore(ws: Path) -> None:
    """Undo changes to a kept corpus (a tool run on it by hand may have rewritten pages)."""
    changed = subprocess.run(["git", "status", "--porcelain"], cwd=ws, capture_output=True,
                             text=True, check=True).stdout
    if changed.strip():
        print(f"  {ws}: {len(changed.splitlines())} changed files restored from its commit")
        subprocess.run(["git", "checkout", "-q", "--", "."], cwd=ws, check=True)
        subprocess.run(["git", "clean", "-fdq"], cwd=ws, check=True)


def load(name: str, work: Path, count: int, seed: int) -> tuple[Path, list[str],
                                                                list[tuple[str, str]]]:
    """The corpus ``name`` converted once under ``work/name`` (kept for later runs):
    its workspace, its pages and a deterministic sample of ``count`` queries."""
    base = work / name
    ws = base / "ws"
    if not (ws / ".git").exists():
        ws.mkdir(parents=True, exist_ok=True)
        pairs = CORPORA[name](ws)
        commit_workspace(ws)
        (base / "queries.txt").write_text("\n".join(f"{q}\t{a}" for q, a in pairs))
    _restore(ws)
    pairs = [tuple(line.split("\t", 1)) for line in
             (base / "queries.txt").read_text().splitlines() if "\t" in line]
    random.Random(seed).shuffle(pairs)
    return ws, sorted(_pages(ws)), [(q, a) for q, a in pairs[:count]]
