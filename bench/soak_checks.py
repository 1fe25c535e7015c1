"""The live soak's ledger of acknowledged writes, and the checks made at its end.

Used by ``bench/soak_live.py``; not run on its own.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from collections import Counter

from soak_writers import Soak, blob_id

TOKEN = re.compile(rb"zq-[a-z0-9]+-[a-z]+-\d+\b")
#: Error codes that are never a fair answer to a well-formed write.
UNEXPECTED = ("internal", "unexpected", "exception:")


class Ledger:
    """Every acknowledged write, by writer kind; thread-safe."""

    def __init__(self):
        self.lock = threading.Lock()
        self.appends: dict[str, str] = {}  # token -> writer kind: once at HEAD
        self.versions: dict[str, str] = {}  # token -> writer kind: somewhere in history
        self.finals: dict[str, tuple[str, bytes, str]] = {}  # path -> (kind, text, how)
        self.saves: dict[str, set[str]] = {}  # an editor's path -> blob ids of its saves
        self.ok: Counter = Counter()
        self.errors: dict[str, Counter] = {}
        self.unexpected: Counter = Counter()
        self.notes: Counter = Counter()
        self.examples: dict[str, str] = {}  # "kind: code" -> the first message seen

    def acked(self, kind: str, ok: bool, code: str = "", *, append: str | None = None,
              version: str | None = None, final: tuple[str, str, str] | None = None,
              unexpected: bool | None = None, message: str = "") -> None:
        """Record one write: acknowledged (``ok``) or refused with ``code``."""
        if not ok:
            self.error(kind, code, unexpected=unexpected, message=message)
            return
        with self.lock:
            self.ok[kind] += 1
            if append:
                self.appends[append] = kind
            if version:
                self.versions[version] = kind
            if final:
                self.finals[final[0]] = (kind, final[1].encode(), final[2])

    def append(self, kind: str, token: str) -> None:
        self.acked(kind, True, append=token)

    def version(self, kind: str, token: str) -> None:
        self.acked(kind, True, version=token)

    def saved(self, kind: str, rel: str, data: bytes) -> None:
        """An editor saved ``data`` to ``rel``: its last save must be at HEAD."""
        with self.lock:
            self.ok[kind] += 1
            self.saves.setdefault(rel, set()).add(blob_id(data))
            self.finals[rel] = (kind, data, "equal")

    def error(self, kind: str, code: str, unexpected: bool | None = None,
              message: str = "") -> None:
        if unexpected is None:
            unexpected = code.startswith(UNEXPECTED)
        with self.lock:
            self.errors.setdefault(kind, Counter())[code] += 1
            self.examples.setdefault(f"{kind}: {code}", message[:300])
            if unexpected:
                self.unexpected[f"{kind}: {code}"] += 1

    def note(self, what: str) -> None:
        with self.lock:
            self.notes[what] += 1


def _git(repo: str, *args, data: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", repo, *args], input=data, capture_output=True)


def _blobs(repo: str, ids: list[str]) -> list[bytes]:
    """The contents of ``ids`` through one ``git cat-file --batch``."""
    out = _git(repo, "cat-file", "--batch", data="".join(f"{i}\n" for i in ids).encode()).stdout
    found, at = [], 0
    while at < len(out):
        header_end = out.index(b"\n", at)
        size = int(out[at:header_end].split()[2])
        found.append(out[header_end + 1:header_end + 1 + size])
        at = header_end + 1 + size + 1
    return found


def head_token_counts(ws: str) -> Counter:
    """How many times each token occurs in the files at HEAD (files under 1 MB)."""
    listing = _git(ws, "ls-tree", "-r", "-z", "-l", "HEAD").stdout
    ids = []
    for entry in filter(None, listing.split(b"\0")):
        meta = entry.split(b"\t", 1)[0].split()
        if meta[1] == b"blob" and int(meta[3]) < (1 << 20):
            ids.append(meta[2].decode())
    counts: Counter = Counter()
    for text in _blobs(ws, ids):
        counts.update(t.decode() for t in TOKEN.findall(text))
    return counts


def history_blobs(ws: str, *paths: str) -> dict[str, set[str]]:
    """{path: blob ids it ever held} for paths under ``paths``, from one ``git log``."""
    out = _git(ws, "log", "--format=", "--raw", "--no-abbrev", "--no-renames", "HEAD", "--",
               *paths).stdout
    found: dict[str, set[str]] = {}
    for line in out.decode(errors="replace").splitlines():
        if line.startswith(":"):
            meta, _, name = line.partition("\t")
            new = meta.split()[3]
            if set(new) != {"0"}:
                found.setdefault(name, set()).add(new)
    return found


def settle(soak: Soak, timeout: float = 120.0) -> list[str]:
    """Wait until ``git status`` names nothing but the odd local names; return what is left."""
    deadline = time.monotonic() + timeout
    while True:
        out = soak.git("status", "--porcelain", "-z", "--untracked-files=all").stdout
        left = [e.decode(errors="backslashreplace") for e in out.split(b"\0")
                if e and not (e.startswith(b"?? ") and e[3:] in soak.odd_names)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


def final_sync(soak: Soak) -> str:
    """Sync until a sync succeeds (three tries); return the last error code, or ''."""
    code = ""
    for _ in range(3):
        ok, code, _answer = soak.cli("sync", timeout=600)
        if ok:
            return ""
        time.sleep(2)
    return code


def check(name: str, ok: bool, detail: str) -> dict:
    return {"check": name, "ok": bool(ok), "detail": detail}


def write_checks(soak: Soak, ledger: Ledger) -> list[dict]:
    """Nothing lost, nothing duplicated, last saves at HEAD, no half save committed."""
    counts = head_token_counts(soak.ws)
    lost = [t for t in ledger.appends if counts[t] == 0]
    twice = [t for t in ledger.appends if counts[t] > 1]
    history = history_blobs(soak.ws, "soak/", "wiki/soak/", "editors/")
    versioned = [b for p, ids in history.items() if "-set" in p or p.endswith(
        ("clash.md",)) or p.startswith("wiki/") for b in ids]
    seen = set(counts)
    for text in _blobs(soak.ws, versioned):
        seen.update(t.decode() for t in TOKEN.findall(text))
    missing = [t for t in ledger.versions if t not in seen]
    stale = []
    for rel, (_kind, text, how) in ledger.finals.items():
        got = _git(soak.ws, "show", f"HEAD:{rel}").stdout
        if (got != text) if how == "equal" else (text not in got):
            stale.append(rel)
    half = [f"{p}@{b[:8]}" for p, ids in history.items() if p in ledger.saves
            for b in ids - ledger.saves[p]]
    return [
        check("nothing lost", not lost and not missing,
              f"{len(ledger.appends)} appended lines at HEAD ({len(lost)} missing: "
              f"{_by_kind(lost, ledger.appends)}), {len(ledger.versions)} set texts in history "
              f"({len(missing)} missing: {_by_kind(missing, ledger.versions)})"),
        check("nothing duplicated", not twice,
              f"{len(twice)} appended lines more than once at HEAD {twice[:5]}"),
        check("last saves at HEAD", not stale,
              f"{len(ledger.finals)} files; not at their last acknowledged text: {stale[:5]}"),
        check("only whole saves committed", not half,
              f"versions of editors' files that no save wrote: {len(half)} {half[:5]}"),
    ]


def _by_kind(tokens: list[str], kinds: dict[str, str]) -> dict:
    return dict(Counter(kinds[t] for t in tokens))


def run_checks(soak: Soak, ledger: Ledger, hostile, elapsed: float, rss_mb: float,
               rss_bound: float) -> dict:
    """Settle, sync once more, then check; the figures and checks as one dict."""
    alive = soak.daemon.poll() is None
    left = settle(soak) if alive else ["the daemon died"]
    sync_error = final_sync(soak) if alive else "no daemon"
    checks = [check("daemon alive", alive, f"exit status {soak.daemon.poll()}"),
              check("edits settled", not left, f"git status still lists {left[:5]}")]
    checks += write_checks(soak, ledger)
    remote_main = _git(soak.bare, "rev-parse", "main").stdout.strip()
    head = _git(soak.ws, "rev-parse", "HEAD").stdout.strip()
    checks.append(check("workspace and remote converged", not sync_error and head == remote_main,
                        f"last sync: {sync_error or 'ok'}; HEAD {head[:10].decode()}, "
                        f"remote {remote_main[:10].decode()}"))
    for name, repo in (("workspace", soak.ws), ("remote", soak.bare)):
        fsck = _git(repo, "fsck", "--strict", "--no-progress")
        said = (fsck.stdout + fsck.stderr).decode(errors="replace").splitlines()
        said = [line for line in said  # the planted locks, and commits a push race left
                if not line.endswith(".lock") and not line.startswith("dangling ")]
        checks.append(check(f"git fsck --strict ({name})", fsck.returncode == 0,
                            f"exit {fsck.returncode} {' | '.join(said)[:300]}".strip()))
    checks.append(check("daemon peak RSS", rss_mb < rss_bound,
                        f"{rss_mb:.0f} MB (bound {rss_bound:.0f} MB)"))
    sync_rss = soak.cli_rss.get("sync", 0.0)
    checks.append(check("minara sync peak RSS", sync_rss < rss_bound,
                        f"{sync_rss:.0f} MB (bound {rss_bound:.0f} MB)"))
    checks.append(check("no unexpected error", not ledger.unexpected,
                        str(dict(ledger.unexpected)) if ledger.unexpected else "none"))
    checks.append(_odd_names_listed(soak))
    with open(soak.log_path, errors="replace") as fh:
        tracebacks = fh.read().count("Traceback")
    checks.append(check("no traceback in the daemon's log", not tracebacks,
                        f"{tracebacks} traceback(s) in {soak.log_path}"))
    kinds = _hostile_rows(hostile)
    for kind, row in kinds.items():
        checks.append(check(f"hostile {kind}", row["verdict"] == "sync went on"
                            and row["kept"] == "yes", f"{row['verdict']}; kept: {row['kept']}"))
    return {"seconds": elapsed, "rss_mb": rss_mb, "cli_rss_mb": dict(soak.cli_rss),
            "checks": checks, "hostile": kinds,
            "notes": {**ledger.notes,
                      "remote pushes that lost a race and were tried again": hostile.races},
            "writers": {k: {"ok": ledger.ok[k], "rate": ledger.ok[k] / elapsed,
                            "errors": sum(ledger.errors.get(k, Counter()).values())}
                        for k in set(ledger.ok) | set(ledger.errors)},
            "errors": {k: dict(c) for k, c in ledger.errors.items()},
            "examples": ledger.examples}


def _odd_names_listed(soak: Soak) -> dict:
    ok, code, answer = soak.cli("status")
    listed = answer.get("skipped", []) if ok else []
    shown = [n.decode("utf-8", "backslashreplace") for n in soak.odd_names]
    missing = [n for n in shown if not any(s.startswith(n + ":") for s in listed)]
    return check("odd local names listed as not versioned", ok and not missing,
                 f"{len(shown)} names; not listed: {missing} {code}")


def _hostile_rows(hostile) -> dict:
    on_remote = hostile.remote_entries()
    rows = {}
    for result in hostile.results:
        kept = "withdrawn" if result.withdrawn else "not pushed" if not result.entries else (
            "yes" if all(e in on_remote for e in result.entries) else "no: " + ", ".join(
                e.decode("utf-8", "backslashreplace") for e in result.entries
                if e not in on_remote))
        rows[result.kind] = {"verdict": result.verdict, "kept": kept}
    return rows
