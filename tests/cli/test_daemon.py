"""``minara status`` and ``minara service`` as real processes, HOME in tmp_path."""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
MINARA = str(BIN / "minara")
MINARAD = str(BIN / "minarad")


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    scrub = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "MINARA_CONFIG", "DBUS_SESSION_BUS_ADDRESS",
             "XDG_RUNTIME_DIR")
    base = {k: v for k, v in os.environ.items() if k not in scrub}
    base.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                XDG_STATE_HOME=str(home / ".state"), MINARA_WORKSPACE_DIR=str(tmp_path / "ws"),
                MINARA_DEBOUNCE_MS="100", MINARA_AUTHOR="tester", MINARA_HTTP="off")
    return base


@pytest.fixture
def fake_systemctl(tmp_path, env):
    """A ``systemctl`` first on PATH that records its arguments (never the real one)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    calls = tmp_path / "systemctl-calls"
    script = bindir / "systemctl"
    script.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n'
                      'case "$2" in is-active) echo active;; is-enabled) echo enabled;; esac\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env["PATH"] = f"{bindir}{os.pathsep}{env['PATH']}"
    return calls


def minara(env, *args):
    return subprocess.run([MINARA, *args], env=env, capture_output=True, text=True, timeout=60)


def wait_for(predicate, timeout=30.0):
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_status_without_a_daemon_exits_1(env):
    done = minara(env, "status")
    assert done.returncode == 1
    assert "not running" in done.stderr
    doc = json.loads(minara(env, "--json", "status").stdout)
    assert doc["running"] is False


def test_a_daemon_that_has_not_reported_yet_is_starting_not_the_last_ones(env, tmp_path):
    from minarad.daemon.state import InstanceLock, write_state

    ws = tmp_path / "ws"
    minara(env, "init")
    write_state(ws, {"pid": 1, "state": "stopped", "watcher": "inotify"})  # the last daemon's
    lock = InstanceLock(ws)
    lock.acquire()  # as a daemon does first thing, before its first report
    try:
        text = minara(env, "status")
        assert text.returncode == 0 and "minarad is starting on" in text.stdout
        assert "None" not in text.stdout and "pid" not in text.stdout
        doc = json.loads(minara(env, "--json", "status").stdout)
        assert doc["running"] and doc["state"] == "starting" and doc["pid"] is None
    finally:
        lock.release()


@pytest.mark.slow
def test_status_of_a_running_daemon(env, tmp_path):
    ws = tmp_path / "ws"
    log = open(tmp_path / "minarad.log", "wb")
    proc = subprocess.Popen([MINARAD], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: "ready:" in (tmp_path / "minarad.log").read_text())
        (ws / "MEMORY.md").write_text("edited\n")
        head = lambda: subprocess.run(["git", "-C", str(ws), "log", "-1", "--format=%H"],  # noqa: E731
                                      capture_output=True, text=True).stdout.strip()
        wait_for(lambda: json.loads(minara(env, "--json", "status").stdout).get(
            "last_commit") and json.loads(minara(env, "--json", "status").stdout)[
            "last_commit"]["commit"] == head())
        doc = json.loads(minara(env, "--json", "status").stdout)
        assert doc["running"] and doc["pid"] == proc.pid and doc["watcher"] == "inotify"
        assert doc["last_commit"]["paths"] == ["MEMORY.md"]
        assert doc["pending_count"] == 0
        text = minara(env, "status")
        assert text.returncode == 0 and f"pid:      {proc.pid}" in text.stdout
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def test_service_install_status_uninstall_with_systemd(env, fake_systemctl, tmp_path):
    done = minara(env, "service", "install")
    assert done.returncode == 0, done.stderr
    unit = tmp_path / "home" / ".config" / "systemd" / "user" / "minarad.service"
    assert f"ExecStart={MINARAD} --workspace {tmp_path / 'ws'}" in unit.read_text()
    assert fake_systemctl.read_text().splitlines() == [
        "--user show-environment", "--user daemon-reload",
        "--user enable --now minarad.service"]
    doc = json.loads(minara(env, "--json", "service", "status").stdout)
    assert doc["installed"] and doc["active"] == "active" and doc["enabled"] == "enabled"
    assert minara(env, "service", "uninstall").returncode == 0
    assert not unit.exists()
    assert "--user disable --now minarad.service" in fake_systemctl.read_text()


def test_service_install_without_systemd_prints_what_to_run(env, tmp_path):
    env["PATH"] = str(tmp_path / "no-bin")
    done = minara(env, "service", "install")
    assert done.returncode == 0, done.stderr
    assert "systemctl --user daemon-reload" in done.stdout
    assert "systemctl --user enable --now minarad.service" in done.stdout
    assert (tmp_path / "home" / ".config" / "systemd" / "user" / "minarad.service").is_file()
    assert minara(env, "service", "uninstall").returncode == 0  # stops the detached minarad


def test_status_of_a_workspace_that_is_a_file(env, tmp_path):
    (tmp_path / "afile").write_text("not a folder\n")
    done = minara(env, "-w", str(tmp_path / "afile"), "status")
    assert done.returncode == 1
    assert "afile is not a folder" in done.stderr and "daemon.lock" not in done.stderr
    under = minara(env, "--json", "-w", str(tmp_path / "afile" / "ws"), "status")
    assert json.loads(under.stdout)["running"] is False and "daemon.lock" not in under.stderr
