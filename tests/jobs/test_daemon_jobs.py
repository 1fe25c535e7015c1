"""The scheduler inside a real ``minarad``: jobs run at start; SIGTERM mid-job writes nothing."""

from __future__ import annotations

import signal

from tests.conftest import MINARA, assert_repo_sound, git
from tests.daemon.conftest import (DaemonProcess, daemon_env, wait_until,  # noqa: F401
                                   ws)


def _run(env, *args):
    import subprocess

    return subprocess.run([MINARA, *args], env=env, capture_output=True, text=True, check=True)


def test_the_daemon_promotes_and_a_sigterm_mid_dream_writes_nothing(daemon_env, ws, tmp_path,
                                                                    llm):
    env = {**daemon_env, **llm.env(), "MINARA_LLM_TIMEOUT_S": "20",
           "WORKSPACE_DREAM_ENABLED": "1"}
    _run(env, "learn", "add", "lesson", "--title", "Flagged", "--detail", "by hand", "--promote")
    _run(env, "memory", "append", "memory/2026-11-30-s1.md", "- keep this")
    llm.script(("stall", 8.0, "- Keep this"))
    daemon = DaemonProcess(env, tmp_path).start()
    try:
        wait_until(lambda: "job:promote" in git(ws, "log", "--format=%an"), what="promotion")
        wait_until(lambda: llm.requests, what="the dream's call")
        memory, head = (ws / "MEMORY.md").read_bytes(), git(ws, "rev-parse", "HEAD")
        assert daemon.stop(signal.SIGTERM) == 0
    finally:
        daemon.stop()
    assert (ws / "MEMORY.md").read_bytes() == memory and git(ws, "rev-parse", "HEAD") == head
    assert not (ws / ".dreamed-state.json").exists()
    assert "job promote: promote 1, demote 0" in daemon.log()
    assert "- [lesson] Flagged\n  - by hand" in memory.decode()
    assert_repo_sound(ws)
