"""Fixtures for daemon tests: a real ``minarad`` process on a tmp workspace, git checks."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import BIN, MINARA, assert_repo_sound, commit_count, git  # noqa: F401

MINARAD = str(BIN / "minarad")
#: Generous: outcomes are awaited, never timed.
TIMEOUT = 30.0
#: Variables of the outer session that must not leak into the daemon.
SCRUB = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM", "MINARA_CONFIG",
         "MINARA_OPERATOR", "MINARA_DATA_DIR", "MINARA_STATE_DIR", "MINARA_DEBOUNCE_CAP_MS",
         "LISTEN_FDS")


def wait_until(predicate, timeout: float = TIMEOUT, step: float = 0.05, what: str = "condition"):
    """Poll ``predicate`` until it returns a truthy value; return it."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(step)


def head_files(ws) -> dict[str, str]:
    """``{path: blob id}`` of HEAD, read by the git CLI."""
    out = git(ws, "ls-tree", "-r", "-z", "HEAD")
    files = {}
    for entry in filter(None, out.split("\0")):
        meta, path = entry.split("\t", 1)
        files[path] = meta.split()[2]
    return files


def disk_files(ws) -> dict[str, str]:
    """``{path: blob id}`` of what minara versions on disk (ignore rules applied)."""
    from dulwich.objects import Blob

    from minarad.workspace.ignore import IgnoreFilter, scan_tree

    found, errors = scan_tree(ws, IgnoreFilter(ws))
    assert not errors, errors
    return {rel: Blob.from_string(Path(ws, rel).read_bytes()).id.decode() for rel in found}


def tree_equals_disk(ws) -> bool:
    """True when HEAD holds exactly the files on disk, byte for byte, and the index is HEAD's.

    HEAD moves before ``.git/index`` is rewritten, so the index is waited
    for too: a ``git status`` right after shows nothing staged.
    """
    try:
        if head_files(ws) != disk_files(ws):
            return False
    except (AssertionError, OSError):
        return False
    staged = subprocess.run(["git", "-C", str(ws), "diff", "--cached", "--quiet"],
                            capture_output=True)
    return staged.returncode == 0


def commits_since(ws, count: int) -> list[dict]:
    """Commits after the first ``count`` (oldest first): subject, author, changed paths."""
    total = commit_count(ws)
    out = git(ws, "log", f"-{total - count}", "--reverse", "--format=%x00%H%x01%an%x01%s",
              "--name-only", "--no-renames")
    commits = []
    for chunk in filter(None, out.split("\0")):
        head, _, names = chunk.partition("\n")
        sha, author, subject = head.split("\x01")
        commits.append({"sha": sha, "author": author, "subject": subject,
                        "paths": sorted(p for p in names.splitlines() if p)})
    return commits


class Barrier:
    """Writes a sentinel file and waits for its commit: earlier events are settled."""

    def __init__(self, ws):
        self.ws = Path(ws)
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        name = f"barrier-{self.n}.md"
        (self.ws / name).write_text(f"barrier {self.n}\n")
        wait_until(lambda: name in head_files(self.ws), what=f"{name} committed")
        # HEAD moves before .git/index is rewritten: wait for that too, so a
        # test's own git command does not meet the daemon's index.lock.
        wait_until(lambda: not (self.ws / ".git" / "index.lock").exists() and subprocess.run(
            ["git", "-C", str(self.ws), "diff", "--cached", "--quiet"],
            capture_output=True).returncode == 0, what="the index written")
        return name


class DaemonProcess:
    """A real ``minarad`` process with its stderr in a log file."""

    def __init__(self, env: dict, log_dir: Path, prefix: tuple = ()):
        self.env = env
        self.log_dir = log_dir
        self.prefix = list(prefix)
        self.proc: subprocess.Popen | None = None
        self.runs = 0
        self.log_path: Path | None = None

    def start(self, *args, wait_ready: bool = True, env: dict | None = None) -> DaemonProcess:
        self.runs += 1
        self.log_path = self.log_dir / f"minarad-{self.runs}.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([*self.prefix, MINARAD, "--log-level", "DEBUG", *args],
                                         env={**self.env, **(env or {})}, stdout=log,
                                         stderr=subprocess.STDOUT)
        if wait_ready:
            wait_until(lambda: "ready:" in self.log() or self.proc.poll() is not None,
                       what="minarad ready")
            assert self.proc.poll() is None, self.log()
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path else ""

    def stop(self, sig=signal.SIGTERM) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=TIMEOUT)

    def kill9(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)


def isolated_env(base: Path, **extra: str) -> dict:
    """Environment for daemon and CLI processes with home, XDG folders and the
    workspace (``base/ws``) inside ``base``; ``extra`` added."""
    home = base / "home"
    for sub in ("config", "state", "data", "cache"):
        (home / sub).mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in SCRUB}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_STATE_HOME=str(home / "state"), XDG_DATA_HOME=str(home / "data"),
               XDG_CACHE_HOME=str(home / "cache"), MINARA_WORKSPACE_DIR=str(base / "ws"),
               MINARA_AUTHOR="tester", MINARA_OPERATOR="the-operator",
               MINARA_HTTP="off", **extra)  # the gateway's own tests turn HTTP on
    return env


@pytest.fixture
def daemon_env(tmp_path) -> dict:
    """Environment for daemon and CLI processes, everything inside ``tmp_path``."""
    return isolated_env(tmp_path, MINARA_DEBOUNCE_MS="150", MINARA_DEBOUNCE_CAP_MS="1500",
                        PYTHONUNBUFFERED="1")


@pytest.fixture
def ws(daemon_env) -> Path:
    """The workspace directory the daemon watches."""
    return Path(daemon_env["MINARA_WORKSPACE_DIR"])


@pytest.fixture
def daemon(daemon_env, tmp_path):
    """A ``minarad`` process (not started); stopped (SIGTERM) after the test."""
    proc = DaemonProcess(daemon_env, tmp_path)
    yield proc
    if proc.proc is not None and proc.proc.poll() is None:
        proc.stop()


@pytest.fixture
def barrier(ws) -> Barrier:
    """Wait until every earlier edit has been committed."""
    return Barrier(ws)


def drop_read_capabilities() -> tuple:
    """A command prefix under which root, too, obeys file permissions (or skip)."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permissions cannot be enforced")
    caps = "-dac_override,-dac_read_search"
    return (setpriv, "--bounding-set", caps, "--inh-caps", caps)
