"""The README's five-minute tour runs as written, on an empty home folder.

The tour's ``$ `` lines are read from README.rst and run in order in one
``bash`` (so ``export`` and ``&`` mean what they mean in a terminal), with
the real ``minara`` and ``minarad`` first on the ``PATH``. Each must exit 0.
Two things a person does between lines are done by the test: after the line
that starts the daemon in the background it waits until ``minara status``
says the daemon is watching (a person types slower than it starts), and the
gateway listens on a free port instead of 7411 (other daemons may hold it).
The browser is not opened: the test follows the login link ``minara ui``
printed, with an HTTP client. The MCP configuration line is not a command:
the test starts the server it names and pings it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import BIN, git

pytestmark = pytest.mark.slow

README = (Path(__file__).resolve().parents[1] / "README.rst").read_text(encoding="utf-8")
TIMEOUT = 60


def tour() -> str:
    """The text of the README's tour section."""
    start = README.index("Five-minute tour\n----")
    end = README.index("\n-----", README.index("\n\n", start + 30))
    return README[start:README.rfind("\n\n", start, end)]


def tour_commands() -> list[str]:
    """The tour's ``$ `` lines, in order."""
    return [line.strip()[2:] for line in tour().splitlines() if line.startswith("    $ ")]


def mcp_config() -> dict:
    """The MCP configuration line the tour shows."""
    line = next(line for line in tour().splitlines() if line.strip().startswith('{"mcpServers"'))
    return json.loads(line)["mcpServers"]["minara"]


def _script(commands: list[str], pidfile: Path) -> str:
    lines = ['cd "$HOME"']
    for number, command in enumerate(commands):
        lines.append(f"echo '::step {number}'")
        if command.endswith("&"):
            lines += [command, f'echo $! > "{pidfile}"',
                      "for _ in $(seq 600); do minara status 2>/dev/null "
                      "| grep -q '^  state: *watching' && break; sleep 0.1; done"]
        else:
            lines.append(f"{command} || {{ echo \"::failed {number} $?\"; exit 1; }}")
    return "\n".join(lines) + "\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _steps(output: str) -> dict[int, str]:
    parts = re.split(r"^::step (\d+)\n", output, flags=re.M)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts), 2)}


def test_the_tour_has_every_stop():
    commands = tour_commands()
    assert any(c.startswith("minarad") and c.endswith("&") for c in commands)
    for needed in ("minara status", "minara memory history", "memory append",
                   "minara search", "minara ui"):
        assert any(needed in c for c in commands), needed
    assert mcp_config()["command"] == "minara" and mcp_config()["args"][0] == "mcp"


def test_the_readme_tour_runs_as_written(env, tmp_path):
    import httpx

    home = Path(env["HOME"])
    pidfile = tmp_path / "tour-daemon.pid"
    run_env = {**env, "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
               "MINARA_HTTP": f"127.0.0.1:{_free_port()}"}
    commands = tour_commands()
    try:
        proc = subprocess.run(["bash", "-c", _script(commands, pidfile)], env=run_env,
                              capture_output=True, text=True, timeout=TIMEOUT)
        steps = _steps(proc.stdout)
        assert proc.returncode == 0, (
            f"a tour command failed:\n{proc.stdout[-3000:]}\nstderr: {proc.stderr[-3000:]}")
        assert sorted(steps) == list(range(len(commands))), proc.stdout
        ws = home / "minara-tour"
        _wait_for_exit(int(pidfile.read_text()))
        log = git(ws, "log", "--format=%an|%s", "--", "USER.md")
        assert any(s.split("|", 1)[1].startswith("editor") for s in log.splitlines()), log
        assert "prefers tea to coffee" in git(ws, "show", "HEAD:USER.md")
        assert "answers in short sentences" in git(ws, "show", "HEAD:MEMORY.md")
        assert "state:    watching" in steps[_index(commands, "minara status")]
        assert "MEMORY.md" in steps[_index(commands, "minara search")]
        login = steps[_index(commands, "minara ui")].strip().splitlines()[-1]
        assert "/login?code=" in login
        _check_login_and_mcp(login, {**run_env, "MINARA_WORKSPACE_DIR": str(ws)}, httpx)
    finally:
        _stop(pidfile)


def _index(commands: list[str], start: str) -> int:
    return next(i for i, c in enumerate(commands) if c.startswith(start))


def _check_login_and_mcp(login: str, env: dict, httpx) -> None:
    # The daemon was stopped by the tour's last line: start it again for the link.
    daemon = subprocess.Popen([str(BIN / "minarad")], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        _wait_ready(env)
        link = subprocess.run([str(BIN / "minara"), "ui"], env=env, capture_output=True,
                              text=True, timeout=TIMEOUT, check=True).stdout.strip()
        with httpx.Client(timeout=TIMEOUT) as client:
            answer = client.get(link, follow_redirects=True)
        assert answer.status_code == 200 and "Workspace" in answer.text, answer.text[:500]
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=TIMEOUT)
    config = mcp_config()
    server = subprocess.Popen([config["command"], *config["args"]], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "tour", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    killer = threading.Timer(TIMEOUT, server.kill)
    killer.start()
    try:
        server.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        server.stdin.flush()
        replies: dict = {}
        while 2 not in replies:
            line = server.stdout.readline()
            assert line, f"minara mcp stopped: {server.stderr.read()[-2000:]}"
            reply = json.loads(line)
            replies[reply.get("id")] = reply
        server.stdin.close()
        assert server.wait(timeout=TIMEOUT) == 0
    finally:
        killer.cancel()
    assert replies[1]["result"]["serverInfo"]["name"], replies
    assert replies[2]["result"] == {}, replies


def _wait_ready(env: dict) -> None:
    deadline = time.monotonic() + TIMEOUT
    while subprocess.run([str(BIN / "minara"), "status"], env=env,
                         capture_output=True).returncode != 0:
        assert time.monotonic() < deadline, "minarad did not get ready"
        time.sleep(0.1)


def _wait_for_exit(pid: int) -> None:
    deadline = time.monotonic() + TIMEOUT
    while _alive(pid):
        assert time.monotonic() < deadline, "the tour's daemon did not stop on kill %1"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purpose (its parent, bash, has exited)
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def _stop(pidfile: Path) -> None:
    """Stop the tour's daemon if a failed step left it running."""
    if pidfile.exists() and _alive(int(pidfile.read_text())):
        os.kill(int(pidfile.read_text()), signal.SIGTERM)
        _wait_for_exit(int(pidfile.read_text()))
