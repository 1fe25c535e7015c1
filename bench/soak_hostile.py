"""The live soak's remote side: another clone pushing to the shared bare repository.

A person on another machine who uses plain git: fetch, reset to the
remote's main, edit, commit, push (a push that loses the race is rebased
on the remote's new main and pushed again). Most pushes are ordinary
edits (a line of its own file, a line appended to the file every local
writer appends to, the clashing line three of ``soak/clash.md``); now and
then a hostile commit of one kind (:data:`KINDS`). An ordinary edit
follows each hostile commit at once: the kind *let sync go on* when that
edit reaches the workspace's HEAD within the judging time, and it is
*kept on the remote* when its entries are still in the remote's main at
the end (a merge must never drop an entry it does not manage). A kind
that wedged sync is then withdrawn (the other clone drops that commit and
force-pushes, as its author would), so that the next kind is judged on
its own.

Used by ``bench/soak_live.py``; not run on its own.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "other-machine", "GIT_AUTHOR_EMAIL": "o@x",
           "GIT_COMMITTER_NAME": "other-machine", "GIT_COMMITTER_EMAIL": "o@x",
           "GIT_CONFIG_NOSYSTEM": "1"}
#: Every hostile kind, in the order they are pushed.
KINDS = ("nonutf8", "control", "symlink", "submodule", "ignored", "oversize")
#: What each kind adds (for the report).
KIND_DOC = {
    "nonutf8": "a file whose name is not UTF-8 (hostile/bad\\xff-N.md)",
    "control": "a control character in a name (hostile/ctl\\x01-N.md)",
    "symlink": "a symbolic link, mode 120000 (hostile/link-N)",
    "submodule": "a submodule entry, mode 160000 (hostile/sub-N)",
    "ignored": "paths the workspace's .gitignore ignores (wiki/.DS_Store, draft-N.tmp)",
    "oversize": "blobs over the size limit: 6.1 MB of text and --oversize-mb of zeros",
}


def git(cwd: str, *args, data: bytes | None = None, check: bool = True) -> bytes:
    """Run the real git CLI (arguments may be bytes); return its stdout."""
    proc = subprocess.run(["git", "-C", cwd, *args], input=data, env=GIT_ENV,
                          capture_output=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {args[0]!r} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout


@dataclass
class KindResult:
    """What one hostile kind did to sync."""

    kind: str
    entries: list[bytes] = field(default_factory=list)
    marker: str = ""
    commit: str = ""
    pushed_at: float = 0.0
    verdict: str = "not pushed"
    withdrawn: bool = False


class HostileRemote:
    """The other clone's thread; ``ledger`` records every acknowledged (pushed) edit.

    Args:
        bare: the shared bare repository.
        clone: where to clone it (made here).
        ledger: the soak's ledger (``append(kind, token)`` / ``version(kind, token)``).
        ws_head_has: tells whether the workspace's HEAD holds a token.
        kinds: hostile kinds to push, spread over ``[start, end]`` seconds of the run.
    """

    def __init__(self, bare: str, clone: str, ledger, ws_head_has: Callable[[str], bool], *,
                 kinds: tuple[str, ...], start: float, end: float, judge_s: float,
                 oversize_mb: int, shared_path: Callable[[], str], pause: float):
        self.bare, self.clone, self.ledger, self.ws_head_has = bare, clone, ledger, ws_head_has
        self.start_s, self.end_s, self.judge_s = start, end, judge_s
        self.oversize_mb, self.shared_path, self.pause = oversize_mb, shared_path, pause
        self.results = [KindResult(kind) for kind in kinds]
        self.serial = 0
        self.races = 0
        self.last_commit = ""
        self.zeros = self.text = ""

    def prepare(self) -> None:
        """Clone the remote; huge blobs are never checked out here (sparse checkout).

        The oversize blobs are made once and pushed to ``refs/hostile/big`` (a
        ref sync does not fetch), so that a push naming them later sends no
        data and a push that lost a race is quick to try again.
        """
        subprocess.run(["git", "clone", "-q", self.bare, self.clone], env=GIT_ENV, check=True)
        git(self.clone, "sparse-checkout", "set", "--no-cone", "/*", "!/hostile/big-*")
        if any(r.kind == "oversize" for r in self.results):
            self.zeros = _hash_zeros(self.clone, self.oversize_mb * 1024 * 1024)
            self.text = git(self.clone, "hash-object", "-w", "--stdin",
                            data=(b"y" * 99 + b"\n") * 61_000).decode().strip()  # 6.1 MB
            listing = f"100644 blob {self.zeros}\tbig.bin\n100644 blob {self.text}\tbig.md\n"
            tree = git(self.clone, "mktree", data=listing.encode()).decode().strip()
            commit = git(self.clone, "commit-tree", tree, "-m", "huge blobs").decode().strip()
            git(self.clone, "push", "-q", "origin", f"{commit}:refs/hostile/big")

    def run(self, began: float, stop: threading.Event) -> None:
        """Push edits until ``stop``; one hostile kind at a time, judged before the next."""
        due = [began + self.start_s + i * (self.end_s - self.start_s) / max(len(self.results), 1)
               for i in range(len(self.results))]
        waiting: KindResult | None = None
        while not stop.is_set():
            if waiting is not None:
                waiting = self._judge(waiting)
            elif self.results and self._next_due(due) is not None:
                waiting = self._push_hostile(self._next_due(due))
            else:
                self._push_ordinary()
            stop.wait(self.pause)
        if waiting is not None:
            waiting.verdict = "not judged: the run ended"

    def _next_due(self, due: list[float]) -> KindResult | None:
        for when, result in zip(due, self.results, strict=True):
            if result.verdict == "not pushed":
                return result if time.monotonic() >= when else None
        return None

    def _judge(self, result: KindResult) -> KindResult | None:
        self._push_ordinary()
        if self.ws_head_has(result.marker):
            result.verdict = "sync went on"
            return None
        if time.monotonic() - result.pushed_at > self.judge_s:
            result.verdict = f"sync wedged: the next edit missing after {self.judge_s:g} s"
            if not self._withdraw(result):
                result.verdict += " (could not withdraw it: later kinds not judged)"
                for later in self.results:
                    if later.verdict == "not pushed":
                        later.verdict = f"not judged: {result.kind} wedged sync for good"
            return None
        return result

    def _withdraw(self, result: KindResult) -> bool:
        """Drop the hostile commit from the remote's main (rebase, forced push)."""
        self._fresh()
        done = subprocess.run(["git", "-C", self.clone, "rebase", "-q", "--onto",
                               f"{result.commit}^", result.commit], env=GIT_ENV,
                              capture_output=True)
        if done.returncode != 0:
            subprocess.run(["git", "-C", self.clone, "rebase", "--abort"], env=GIT_ENV,
                           capture_output=True)
            return False
        pushed = subprocess.run(["git", "-C", self.clone, "push", "-q", "--force", "origin",
                                 "HEAD:main"], env=GIT_ENV, capture_output=True)
        result.entries, result.withdrawn = [], pushed.returncode == 0
        return result.withdrawn

    # -- pushes ---------------------------------------------------------------------------

    def _token(self, verb: str) -> str:
        self.serial += 1
        return f"zq-remote-{verb}-{self.serial}"

    def _fresh(self) -> None:
        git(self.clone, "fetch", "-q", "origin")
        git(self.clone, "reset", "-q", "--hard", "origin/main")

    def _commit_and_push(self, message: str, change: Callable[[], object], tries: int = 5
                         ) -> bool:
        """Apply ``change`` on the remote's latest main and push; False if every try lost.

        ``change`` edits the clone's files; it may return index entries
        (``mode,blob,path``) to add by hand, for what a folder cannot hold.
        """
        for attempt in range(tries):
            if attempt == 0 or tries > 5 or not self._rebased():  # hostile: made anew
                self._fresh()
                entries = change()
                git(self.clone, "add", "-A", "-f", ".")
                for entry in entries or ():
                    git(self.clone, "update-index", "--add", "--cacheinfo", entry)
                git(self.clone, "commit", "-q", "--allow-empty", "-m", message)
            self.last_commit = git(self.clone, "rev-parse", "HEAD").decode().strip()
            if subprocess.run(["git", "-C", self.clone, "push", "-q", "origin", "HEAD:main"],
                              env=GIT_ENV, capture_output=True).returncode == 0:
                return True
            self.races += 1
        return False

    def _rebased(self) -> bool:
        """Replay the commit that lost the push race on the remote's new main (pull --rebase)."""
        git(self.clone, "fetch", "-q", "origin")
        if subprocess.run(["git", "-C", self.clone, "rebase", "-q", "origin/main"], env=GIT_ENV,
                          capture_output=True).returncode == 0:
            return True
        subprocess.run(["git", "-C", self.clone, "rebase", "--abort"], env=GIT_ENV,
                       capture_output=True)
        return False

    def _push_ordinary(self, verb: str = "") -> str:
        """Push one ordinary edit (``verb``: line, shared or clash; by turns if empty)."""
        verb = verb or ("line", "shared", "clash")[self.serial % 3]
        token = self._token(verb)
        if verb == "line":
            ok = self._commit_and_push(f"remote: {token}", lambda: self._append("soak/remote.md",
                                                                                 token))
        elif verb == "shared":
            path = self.shared_path()
            ok = self._commit_and_push(f"remote: {token}", lambda: self._append(path, token))
        else:
            ok = self._commit_and_push(f"remote: {token}", lambda: self._clash(token))
        if ok:
            (self.ledger.version if verb == "clash" else self.ledger.append)("remote", token)
        else:
            self.ledger.error("remote", "push_lost_every_race")
        return token

    def _append(self, rel: str, token: str) -> None:
        full = os.path.join(self.clone, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "ab") as fh:
            if fh.tell():
                with open(full, "rb") as rd:
                    if not rd.read().endswith(b"\n"):
                        fh.write(b"\n")
            fh.write(f"- {token}\n".encode())

    def _clash(self, token: str) -> None:
        full = os.path.join(self.clone, "soak", "clash.md")
        lines = open(full).read().splitlines() if os.path.exists(full) else []
        lines += [f"line {n}" for n in range(len(lines), 5)]
        lines[2] = f"line three: {token}"
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write("\n".join(lines) + "\n")

    def _push_hostile(self, result: KindResult) -> KindResult | None:
        serial = self.serial
        ok = self._commit_and_push(f"remote: hostile {result.kind}",
                                   lambda: self._add_hostile(result, serial), tries=20)
        if not ok:
            result.verdict, result.entries = "not pushed: lost every race", []
            return None
        result.pushed_at, result.commit = time.monotonic(), self.last_commit
        # a line of its own file: never overwritten, so at HEAD once it was merged
        result.marker = self._push_ordinary("line")
        result.verdict = "judging"
        return result

    def _add_hostile(self, result: KindResult, n: int) -> list[str]:
        """Add one kind's entries; return the index entries to add by hand."""
        root = os.fsencode(self.clone)
        by_hand: list[str] = []
        result.entries = getattr(self, f"_add_{result.kind}")(root, n, by_hand)
        return by_hand

    def _add_nonutf8(self, root: bytes, n: int, _by_hand: list[str]) -> list[bytes]:
        name = b"hostile/bad\xff-%d.md" % n
        _write(root, name, b"a name that is not UTF-8\n")
        return [name]

    def _add_control(self, root: bytes, n: int, _by_hand: list[str]) -> list[bytes]:
        name = b"hostile/ctl\x01-%d.md" % n
        _write(root, name, b"a control character in the name\n")
        return [name]

    def _add_symlink(self, root: bytes, n: int, _by_hand: list[str]) -> list[bytes]:
        name = b"hostile/link-%d" % n
        os.makedirs(os.path.join(root, b"hostile"), exist_ok=True)
        if os.path.lexists(os.path.join(root, name)):  # a try that lost the push race
            os.unlink(os.path.join(root, name))
        os.symlink(b"../SOUL.md", os.path.join(root, name))
        return [name]

    def _add_submodule(self, root: bytes, n: int, by_hand: list[str]) -> list[bytes]:
        name = b"hostile/sub-%d" % n
        # an empty folder: what a clone leaves for a submodule it did not check out
        os.makedirs(os.path.join(root, name), exist_ok=True)
        target = git(self.clone, "rev-parse", "HEAD").strip().decode()
        by_hand.append(f"160000,{target},{name.decode()}")
        return [name]

    def _add_ignored(self, root: bytes, n: int, _by_hand: list[str]) -> list[bytes]:
        names = [b"wiki/.DS_Store", b"draft-%d.tmp" % n]
        for name in names:
            _write(root, name, b"ignored here, committed there\n")
        return names

    def _add_oversize(self, root: bytes, n: int, by_hand: list[str]) -> list[bytes]:
        text, big = b"hostile/big-%d.md" % n, b"hostile/big-%d.bin" % n
        by_hand += [f"100644,{self.text},{text.decode()}", f"100644,{self.zeros},{big.decode()}"]
        return [text, big]

    def remote_entries(self) -> set[bytes]:
        """Paths in the remote's main now (raw bytes)."""
        out = git(self.bare, "ls-tree", "-r", "-z", "--name-only", "main")
        return set(filter(None, out.split(b"\0")))


def _write(root: bytes, name: bytes, data: bytes) -> None:
    full = os.path.join(root, name)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as fh:
        fh.write(data)


def _hash_zeros(repo: str, size: int) -> str:
    """Store a blob of ``size`` zero bytes without holding it in memory; return its id."""
    proc = subprocess.Popen(["git", "-C", repo, "hash-object", "-w", "--stdin"], env=GIT_ENV,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    chunk = b"\0" * (1 << 20)
    for start in range(0, size, len(chunk)):
        proc.stdin.write(chunk[:min(len(chunk), size - start)])
    proc.stdin.close()
    blob = proc.stdout.read().decode().strip()
    if proc.wait() != 0:
        raise RuntimeError("git hash-object failed")
    return blob
