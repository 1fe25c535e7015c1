"""A real ``minarad`` serving the gateway on a free loopback port, and clients for it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.conftest import BIN, MINARA
from tests.daemon.conftest import wait_until

MINARAD = str(BIN / "minarad")
TIMEOUT = 30.0
SCRUB = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM", "MINARA_CONFIG",
         "MINARA_OPERATOR", "MINARA_DATA_DIR", "MINARA_STATE_DIR", "MINARA_HTTP", "LISTEN_FDS")
#: The body limit the test server runs with (small, so 413 is cheap to reach).
MAX_BODY = 256 * 1024


def wait_for(predicate, what: str, timeout: float = TIMEOUT):
    """Poll ``predicate`` until it is truthy; return its value."""
    return wait_until(predicate, timeout=timeout, what=what)


class Gateway:
    """A running ``minarad`` with the gateway on; ``api`` is a bearer-token client."""

    def __init__(self, root: Path, extra_env: dict | None = None):
        home = root / "home"
        home.mkdir(parents=True)
        self.ws = root / "ws"
        self.env = {k: v for k, v in os.environ.items() if k not in SCRUB}
        self.env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
                        XDG_STATE_HOME=str(home / "state"), XDG_DATA_HOME=str(home / "data"),
                        MINARA_WORKSPACE_DIR=str(self.ws), MINARA_AUTHOR="tester",
                        MINARA_OPERATOR="the-operator", MINARA_DEBOUNCE_MS="100",
                        MINARA_HTTP="127.0.0.1:0", MINARA_HTTP_MAX_BODY_BYTES=str(MAX_BODY),
                        PYTHONUNBUFFERED="1", GIT_CONFIG_NOSYSTEM="1",
                        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"))
        self.env.update(extra_env or {})
        self.state = home / "state" / "minara"
        self.log_path = root / "minarad.log"
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.token = ""
        self.api: httpx.Client | None = None

    def start(self) -> Gateway:
        address = self.state / "gateway" / "address.json"
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen([MINARAD, "--log-level", "DEBUG"], env=self.env,
                                         stdout=log, stderr=subprocess.STDOUT)
        wait_for(lambda: "ready:" in self.log() or self.proc.poll() is not None, "minarad")
        assert self.proc.poll() is None, self.log()
        self.url = json.loads(address.read_text())["url"]
        self.token = self.cli("token", check=0).stdout.strip()
        self.api = httpx.Client(base_url=self.url, timeout=TIMEOUT,
                                headers={"Authorization": f"Bearer {self.token}"})
        wait_for(lambda: self._answers(), "the gateway to answer")
        return self

    def _answers(self) -> bool:
        try:
            return self.api.get("/v1/openapi.json").status_code == 200
        except httpx.TransportError:
            return False

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.api is not None:
            self.api.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=TIMEOUT)

    def cli(self, *args, check=None, input=None) -> subprocess.CompletedProcess:
        """Run the real ``minara`` against this workspace."""
        proc = subprocess.run([MINARA, *map(str, args)], env=self.env, capture_output=True,
                              text=True, input=input, timeout=120)
        if check is not None:
            assert proc.returncode == check, (proc.returncode, proc.stdout, proc.stderr)
        return proc

    def login_url(self) -> str:
        return json.loads(self.cli("ui", "--json", check=0).stdout)["login_url"]

    def new_login_url(self) -> str:
        """A login link made as ``minara ui`` makes it, in this process (no CLI started)."""
        from minarad.gateway import security

        return f"{self.url}/login?code={security.new_login_code(self.state)}"

    def browser_client(self) -> tuple[httpx.Client, str]:
        """A cookie-holding client signed in through a login link, and its CSRF token."""
        client = httpx.Client(base_url=self.url, timeout=TIMEOUT)
        response = client.get(self.login_url().replace(self.url, ""))
        assert response.status_code == 303, response.text
        page = client.get("/workspace")
        csrf = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page.text).group(1)
        return client, csrf

    def wait_committed(self, path: str, version: int) -> dict:
        """Wait until ``path`` is at ``version`` (the daemon commits editor saves)."""
        def at():
            r = self.api.get(f"/v1/workspace/files/{path}")
            return r.json() if r.status_code == 200 and r.json()["version"] >= version else None
        return wait_for(at, f"{path} at version {version}")


class EventListener:
    """Listens on ``/v1/events`` in a thread for the first ``kind`` event that ``want`` takes.

    ``with EventListener(gw, "commit") as heard: ...`` returns once the stream
    is open; after the block, ``heard.data`` is that event's data (None if none
    came within ``timeout``).
    """

    def __init__(self, gw: Gateway, kind: str, want: Callable[[dict], bool] = lambda d: True,
                 timeout: float = 30.0):
        self.gw, self.kind, self.want, self.timeout = gw, kind, want, timeout
        self.data: dict | None = None
        self._opened = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)

    def _listen(self) -> None:
        with self.gw.api.stream("GET", "/v1/events", timeout=self.timeout) as r:
            self._opened.set()
            event = None
            for line in r.iter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == self.kind:
                    data = json.loads(line[6:])
                    if self.want(data):
                        self.data = data
                        return

    def __enter__(self) -> EventListener:
        self._thread.start()
        assert self._opened.wait(20), "the event stream did not open"
        return self

    def __exit__(self, *exc: object) -> None:
        self._thread.join(self.timeout)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    """One server for a test module (tests use their own file names)."""
    gw = Gateway(tmp_path_factory.mktemp("gateway")).start()
    yield gw
    gw.stop()
