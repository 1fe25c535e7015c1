"""Search quality on a real, human-written corpus: the Python documentation.

Corpus: Debian's ``python3-doc`` package (``/usr/share/doc/python3.X/html``;
``apt-get install python3-doc``). Each HTML page becomes one Markdown file
of a workspace (headings kept, so pages have sections); the text of each
internal link to another page becomes a query whose answer is the linked
page. A deterministic sample of those queries is asked of:

- SQLite FTS5 BM25 over whole pages (the baseline),
- minara keyword, semantic and hybrid search (one hit per page),

and MRR@10 and recall@10 are printed side by side, in one run. A second,
hand-made set of Korean, Japanese and Chinese notes and questions (with
particles, endings and compounds) compares keyword and hybrid.

Usage::

    python bench/quality.py [--queries 300] [--seed 13] [--work /tmp/minara-quality]

The work folder keeps the converted workspace, index and embeddings, so a
second run reuses them (embedding the corpus takes minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import glob
import html
import html.parser
import os
import random
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SKIP = re.compile(r"^(genindex|py-modindex|search|whatsnew/|_|download|copyright|license|"
                  r"bugs|about|contents|index\.html)")
BLOCKS = {"p", "li", "dt", "dd", "pre", "td", "th", "div", "blockquote"}


class PageParser(html.parser.HTMLParser):
    """The main body of one Sphinx page: title, headings, text, and internal links."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth = 0  # >0 inside the body div
        self.lines: list[str] = []
        self.current: list[str] = []
        self.heading: int | None = None
        self.skip = 0
        self.title = ""
        self.links: list[tuple[str, str]] = []
        self.link: list | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.depth == 0:
            if tag == "div" and a.get("role") == "main":
                self.depth = 1
            return
        if tag == "div":
            self.depth += 1
        if tag == "a" and "headerlink" in (a.get("class") or ""):
            self.skip += 1
            return
        if tag == "a" and "reference internal" in (a.get("class") or "") and a.get("href"):
            self.link = [a["href"], []]
        if re.fullmatch(r"h[1-6]", tag):
            self.flush()
            self.heading = int(tag[1])
        elif tag in BLOCKS or tag == "br":
            self.flush()

    def handle_endtag(self, tag):
        if self.depth == 0:
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
                if self.heading == 1 and not self.title:
                    self.title = text
                self.lines += ["", "#" * (self.heading or 1) + " " + text, ""]
            self.current, self.heading = [], None
        elif tag in BLOCKS:
            self.flush()
        if tag == "div":
            self.depth -= 1

    def handle_data(self, data):
        if self.depth and not self.skip:
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
        self.flush()
        return "\n".join(self.lines).strip() + "\n"


def find_docs() -> Path:
    found = sorted(glob.glob("/usr/share/doc/python3*/html/library/os.html"))
    if not found:
        sys.exit("python3-doc is not installed: apt-get install python3-doc")
    return Path(found[-1]).parent.parent


def convert(docs: Path, ws: Path) -> dict[str, list[tuple[str, str]]]:
    """Write each page as Markdown under ``ws``; return page -> [(target page, link text)]."""
    links: dict[str, list[tuple[str, str]]] = {}
    for source in sorted(docs.rglob("*.html")):
        rel = source.relative_to(docs).as_posix()
        if SKIP.match(rel):
            continue
        parser = PageParser()
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
            if not target:
                continue
            resolved = os.path.normpath(os.path.join(os.path.dirname(rel), target))
            if resolved.endswith(".html"):
                out.append((resolved[:-5] + ".md", label))
        links[page] = out
    return links


def make_queries(links, pages: set[str], count: int, seed: int) -> list[tuple[str, str]]:
    """(query, answer page) pairs from link texts, deduplicated, sampled."""
    pairs = set()
    for page, found in links.items():
        for target, label in found:
            label = label.strip()
            if target in pages and target != page and len(label) >= 3 and \
                    any(ch.isalpha() for ch in label):
                pairs.add((label, target))
    # a link text pointing at several pages is ambiguous: keep those with one answer
    answers: dict[str, set[str]] = {}
    for label, target in pairs:
        answers.setdefault(label.lower(), set()).add(target)
    unique = sorted((label, target) for label, target in pairs
                    if len(answers[label.lower()]) == 1)
    random.Random(seed).shuffle(unique)
    return unique[:count]


def commit_workspace(ws: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=ws, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "corpus"], cwd=ws, check=True, env=env)


def fts5(ws: Path, pages: list[str]):
    """An in-memory FTS5 table of whole pages; returns a search function."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE p USING fts5(path UNINDEXED, body)")
    db.executemany("INSERT INTO p VALUES (?, ?)",
                   [(p, (ws / p).read_text(encoding="utf-8")) for p in pages])

    def search(query: str) -> list[str]:
        words = re.findall(r"\w+", query)
        if not words:
            return []
        match = " OR ".join('"%s"' % w.replace('"', "") for w in words)
        rows = db.execute("SELECT path FROM p WHERE p MATCH ? ORDER BY bm25(p) LIMIT 10",
                          (match,)).fetchall()
        return [r[0] for r in rows]
    return search


def score(results: list[list[str]], answers: list[str]) -> tuple[float, float]:
    """MRR@10 and recall@10."""
    rr, hit = 0.0, 0
    for found, answer in zip(results, answers, strict=True):
        top = list(dict.fromkeys(found))[:10]
        if answer in top:
            rr += 1 / (top.index(answer) + 1)
            hit += 1
    n = max(len(answers), 1)
    return rr / n, hit / n


def minara_search(index, mode: str):
    from minarad.errors import InvalidInput

    def search(query: str) -> list[str]:
        try:
            hits = index.search(query, limit=10, per_page=1, mode=mode)
        except InvalidInput:
            return []
        return [h.path for h in hits]
    return search


def timed(label: str, search, queries: list[str]) -> tuple[list[list[str]], float]:
    start = time.perf_counter()
    results = [search(q) for q in queries]
    per_query = (time.perf_counter() - start) / max(len(queries), 1) * 1000
    return results, per_query


CJK_NOTES = {
    "ko__deploy.md": "# 배포 절차\n\n서버에 배포하기 전에 데이터베이스를 백업한다. 배포가 실패하면 이전 버전으로 "
                     "되돌린다.\n",
    "ko__migration.md": "# 마이그레이션\n\n스키마를 변경할 때는 마이그레이션 파일을 만들고, 문제가 생기면 "
                        "다운그레이드 명령으로 되돌린다.\n",
    "ko__meeting.md": "# 회의록\n\n매주 월요일 오전에 팀 회의를 한다. 회의에서는 지난주 진행 상황을 공유한다.\n",
    "ko__coffee.md": "# 커피\n\n사무실 커피머신은 3층 휴게실에 있다. 원두는 금요일마다 주문한다.\n",
    "ko__vacation.md": "# 휴가 신청\n\n휴가는 최소 2주 전에 인사팀에 신청서를 제출해야 한다.\n",
    "ko__security.md": "# 보안 규칙\n\n비밀번호는 90일마다 변경하고, 공용 컴퓨터에 저장하지 않는다.\n",
    "ja__tokyo.md": "# 東京出張\n\n来月、東京の本社に出張します。新幹線で移動し、品川のホテルに泊まります。\n",
    "ja__backup.md": "# バックアップ\n\n毎晩サーバーのバックアップを取ります。復元手順は運用手順書にあります。\n",
    "ja__cherry.md": "# 花見\n\n四月に上野公園で花見をしました。桜がとてもきれいでした。\n",
    "ja__api.md": "# API設計\n\nREST APIのエンドポイントは名詞で命名し、バージョン番号をURLに含めます。\n",
    "ja__cache.md": "# キャッシュ\n\nキャッシュの有効期限は五分です。設定を変更したらキャッシュを消去してください。\n",
    "zh__deploy.md": "# 部署流程\n\n我们在周四部署新版本。部署之前必须通过所有自动化测试。\n",
    "zh__lunch.md": "# 午餐\n\n公司食堂中午十二点开门，周五有火锅。\n",
    "zh__logging.md": "# 日志\n\n生产环境的日志保存三十天，错误日志会发送到监控系统。\n",
    "zh__hiring.md": "# 招聘\n\n面试分为三轮：技术面试、团队面试和人事面试。\n",
    "zh__database.md": "# 数据库\n\n主数据库每天凌晨自动备份，备份文件保存在对象存储中。\n",
}
CJK_QUERIES = [
    ("배포가 실패하면 어떻게 하나요", "ko/deploy.md"),
    ("서버에 배포하기 전에 무엇을 하나요", "ko/deploy.md"),
    ("마이그레이션을 되돌리는 방법", "ko/migration.md"),
    ("스키마 변경은 어떻게 하나요", "ko/migration.md"),
    ("팀 회의는 언제 하나요", "ko/meeting.md"),
    ("커피머신은 어디에 있나요", "ko/coffee.md"),
    ("원두 주문", "ko/coffee.md"),
    ("휴가를 신청하려면", "ko/vacation.md"),
    ("비밀번호를 얼마나 자주 바꿔야 하나요", "ko/security.md"),
    ("東京への出張はいつですか", "ja/tokyo.md"),
    ("品川のホテル", "ja/tokyo.md"),
    ("バックアップの復元方法", "ja/backup.md"),
    ("サーバーのバックアップはいつ取りますか", "ja/backup.md"),
    ("上野で桜を見ました", "ja/cherry.md"),
    ("APIのバージョン番号", "ja/api.md"),
    ("キャッシュを消去する", "ja/cache.md"),
    ("我们什么时候部署新版本", "zh/deploy.md"),
    ("部署之前要做什么", "zh/deploy.md"),
    ("食堂几点开门", "zh/lunch.md"),
    ("日志保存多久", "zh/logging.md"),
    ("面试有几轮", "zh/hiring.md"),
    ("数据库怎么备份", "zh/database.md"),
    ("错误日志发送到哪里", "zh/logging.md"),
]
#: Questions in other words or another language than the note (meaning only).
CJK_PARAPHRASES = [
    ("점심 메뉴", "zh/lunch.md"),
    ("database backup schedule", "zh/database.md"),
    ("how many interview rounds", "zh/hiring.md"),
    ("password rotation policy", "ko/security.md"),
    ("business trip hotel", "ja/tokyo.md"),
    ("休暇の申請", "ko/vacation.md"),
    ("咖啡机在哪里", "ko/coffee.md"),
    ("release testing before shipping", "zh/deploy.md"),
]


def build_index(ws: Path, state: Path, model):
    from minarad.index import Index

    index = Index(ws, state / "index" / "bench", model=model)
    start = time.perf_counter()
    stats = index.catch_up()
    if stats.files_indexed:
        print(f"  indexed {stats.files_indexed} files, {stats.documents} sections in "
              f"{time.perf_counter() - start:.1f}s")
    if model is not None and model.path is not None:
        start = time.perf_counter()
        e = index.catch_up_embeddings()
        took = time.perf_counter() - start
        if e and e.embedded:
            print(f"  embedded {e.embedded} sections in {took:.0f}s "
                  f"({e.embedded / took:.1f} sections/s)")
    return index


def run_cjk(work: Path, model) -> None:
    ws = work / "cjk-ws"
    if not (ws / ".git").exists():
        ws.mkdir(parents=True, exist_ok=True)
        for name, text in CJK_NOTES.items():
            (ws / name.replace("__", "/")).parent.mkdir(parents=True, exist_ok=True)
            (ws / name.replace("__", "/")).write_text(text, encoding="utf-8")
        commit_workspace(ws)
    index = build_index(ws, work / "cjk-state", model)
    modes = ["keyword"] + (["semantic", "hybrid"] if model and model.path else [])
    for title, pairs in (("questions with particles, endings and compounds", CJK_QUERIES),
                         ("other words or another language (meaning only)",
                          CJK_PARAPHRASES)):
        queries, answers = [q for q, _a in pairs], [a for _q, a in pairs]
        print(f"\nhand-made Korean/Japanese/Chinese set, {len(CJK_NOTES)} notes: "
              f"{len(queries)} {title}")
        for mode in modes:
            results, _ms = timed(mode, minara_search(index, mode), queries)
            mrr, recall = score(results, answers)
            print(f"  minara {mode:<9} MRR@10 {mrr:.3f}  recall@10 {recall:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--work", default="/tmp/minara-quality")
    parser.add_argument("--no-semantic", action="store_true")
    args = parser.parse_args()

    from minarad.index.embedder import ModelChoice, packaged_model

    path = None if args.no_semantic else packaged_model("e5-small")
    model = ModelChoice("e5-small", path) if path else None
    work = Path(args.work)
    docs = find_docs()
    ws = work / "ws"
    if not (ws / ".git").exists():
        ws.mkdir(parents=True, exist_ok=True)
        links = convert(docs, ws)
        commit_workspace(ws)
        (work / "links.txt").write_text("\n".join(
            f"{p}\t{t}\t{label}" for p, found in links.items() for t, label in found))
    links = {}
    for line in (work / "links.txt").read_text().splitlines():
        page, target, label = (line.split("\t") + ["", ""])[:3]
        links.setdefault(page, []).append((target, label))
    pages = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*.md"))
    pairs = make_queries(links, set(pages), args.queries, args.seed)
    print(f"corpus: {docs} ({len(pages)} pages); {len(pairs)} link-text queries "
          f"(seed {args.seed})")
    index = build_index(ws, work / "state", model)
    queries, answers = [q for q, _a in pairs], [a for _q, a in pairs]

    rows = [("SQLite FTS5 BM25 (pages)", fts5(ws, pages))]
    rows += [(f"minara {m}", minara_search(index, m)) for m in
             (["keyword"] + (["semantic", "hybrid"] if model else []))]
    baseline = None
    for label, search in rows:
        results, ms = timed(label, search, queries)
        mrr, recall = score(results, answers)
        baseline = baseline or mrr
        print(f"  {label:<26} MRR@10 {mrr:.3f}  recall@10 {recall:.3f}  "
              f"({mrr / baseline:.2f}x FTS5)  {ms:.1f} ms/query")
    run_cjk(work, model)


if __name__ == "__main__":
    main()
