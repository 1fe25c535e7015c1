"""Headless Chromium over the DevTools protocol on a pipe (no port, no extra package).

One browser process serves a whole materialization: each page is opened in
a fresh tab, its console errors and uncaught exceptions are collected, and
each chart element is captured at twice its CSS size. The browser runs with
a throw-away profile and without network services of its own; it is ended
when the :class:`Browser` is closed.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

from minarad.errors import MinaraError

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio")
#: How long one DevTools call may take (seconds).
CALL_TIMEOUT = 30.0
#: Pixel ratio of the chart images.
SCALE = 2


class BrowserError(MinaraError):
    """The browser could not be started, or stopped answering."""

    code = "browser_error"


def find_chromium(setting: str) -> str | None:
    """The Chromium binary the ``chromium`` setting names, or None when there is none.

    A bare name is looked up on ``PATH`` (then as ``/usr/bin/<name>``); a path
    is used if it is an executable file; ``off`` disables the browser.
    """
    if not setting or setting == "off":
        return None
    if os.sep in setting:
        return setting if os.path.isfile(setting) and os.access(setting, os.X_OK) else None
    found = shutil.which(setting) or shutil.which(f"/usr/bin/{setting}")
    return found


@dataclasses.dataclass
class PageReport:
    """What opening one page showed."""

    state: str | None
    errors: list[str]
    images: list[bytes]


class Browser:
    """A headless Chromium process driven over ``--remote-debugging-pipe``.

    Args:
        binary: the Chromium executable (see :func:`find_chromium`).
    """

    def __init__(self, binary: str):
        self.binary = binary
        self._profile = tempfile.mkdtemp(prefix="minara-chromium-")
        self._buffer = b""
        self._events: list[dict] = []
        self._next_id = 0
        self._replies: dict[int, dict] = {}
        self._methods: dict[int, str] = {}
        try:
            self._proc, self._out, self._in = self._start()
        except BaseException:
            shutil.rmtree(self._profile, ignore_errors=True)
            raise

    def _start(self) -> tuple[subprocess.Popen, int, int]:
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # park the child's ends above 9 so that dup2 onto 3 and 4 cannot clobber them
        child_in = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_out = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD_CLOEXEC, 10)
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)

        def wire_pipes() -> None:  # runs in the child, before exec
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        args = [self.binary, *FLAGS, f"--user-data-dir={self._profile}",
                "--remote-debugging-pipe", "about:blank"]
        try:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, close_fds=False,
                                    preexec_fn=wire_pipes)
        except OSError as exc:
            os.close(to_browser_w)
            os.close(from_browser_r)
            raise BrowserError(f"cannot start {self.binary}: {exc.strerror}") from None
        finally:
            os.close(child_in)
            os.close(child_out)
        return proc, to_browser_w, from_browser_r

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """End the browser (SIGTERM: its profile is thrown away) and remove the profile."""
        for fd in (self._out, self._in):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._proc.terminate()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    # -- the protocol -----------------------------------------------------------

    def call(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = CALL_TIMEOUT) -> dict:
        """Send one DevTools command and return its result (events are kept aside)."""
        return self.results([self.send(method, params, session)], timeout)[0]

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        """Send one DevTools command without waiting; returns its id for :meth:`results`."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._write(json.dumps(message).encode() + b"\0")
        self._methods[self._next_id] = method
        return self._next_id

    def results(self, ids: list[int], timeout: float = CALL_TIMEOUT) -> list[dict]:
        """Wait for the replies to the commands ``ids`` (sent with :meth:`send`), in order."""
        deadline = time.monotonic() + timeout * max(1, len(ids))
        while not all(i in self._replies for i in ids):
            reply = self._read(deadline)
            if "id" in reply:
                self._replies[reply["id"]] = reply
            else:
                self._events.append(reply)
        out = []
        for i in ids:
            reply, method = self._replies.pop(i), self._methods.pop(i)
            if "error" in reply:
                raise BrowserError(f"{method}: {reply['error'].get('message')}")
            out.append(reply.get("result", {}))
        return out

    def wait_for(self, method: str, session: str, timeout: float = CALL_TIMEOUT) -> dict:
        """Wait for the event ``method`` of ``session`` (one already received counts)."""
        deadline = time.monotonic() + timeout
        while True:
            for event in self._events:
                if event.get("method") == method and event.get("sessionId") == session:
                    self._events.remove(event)
                    return event
            self._events.append(self._read(deadline))

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._out, view):]
        except BrokenPipeError:
            raise BrowserError("the browser exited") from None

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise BrowserError("the browser did not answer in time")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise BrowserError("the browser exited")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    # -- pages ------------------------------------------------------------------

    def open_page(self, path: str | os.PathLike, *, capture: str | None = None,
                  width: int = 1000, height: int = 800) -> PageReport:
        """Open the local file ``path``; report its console errors and capture elements.

        Args:
            path: an HTML file.
            capture: a CSS selector; each matching element is captured as a PNG
                at :data:`SCALE` times its size, in document order.
            width, height: the window size in CSS pixels.

        Returns:
            ``document.body.dataset.state`` after load, the errors, the images.
        """
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target,
                                                      "flatten": True})["sessionId"]
        try:
            for method in ("Page.enable", "Runtime.enable", "Log.enable"):
                self.call(method, session=session)
            self.call("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": SCALE,
                       "mobile": False}, session=session)
            url = "file://" + os.path.abspath(path)
            self.call("Page.navigate", {"url": url}, session=session)
            self.wait_for("Page.loadEventFired", session)
            state = self._evaluate(session, "document.body && document.body.dataset.state")
            images = self._capture(session, capture) if capture else []
            return PageReport(state, self._errors(session), images)
        finally:
            with contextlib.suppress(BrowserError):
                self.call("Target.closeTarget", {"targetId": target})

    def _evaluate(self, session: str, expression: str):
        result = self.call("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True}, session=session)
        return result.get("result", {}).get("value")

    def _capture(self, session: str, selector: str) -> list[bytes]:
        found = f"document.querySelectorAll({json.dumps(selector)})"
        rects = self._evaluate(session, (
            f"Array.from({found}).map(e => {{const r = e.getBoundingClientRect();"
            " return [r.left + scrollX, r.top + scrollY, r.width, r.height];})")) or []
        # sent all at once: the browser encodes the images while the next ones are asked for
        ids = [self.send("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True, "optimizeForSpeed": True,
            "clip": {"x": x, "y": y, "width": w, "height": h, "scale": 1}}, session=session)
            for x, y, w, h in rects]
        return [base64.b64decode(shot["data"]) for shot in self.results(ids)]

    def _errors(self, session: str) -> list[str]:
        errors, kept = [], []
        for event in self._events:
            if event.get("sessionId") != session:
                kept.append(event)
                continue
            text = _error_text(event)
            if text:
                errors.append(text)
        self._events = kept
        return errors


def _error_text(event: dict) -> str | None:
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        return (details.get("exception", {}).get("description") or details.get("text")
                or "uncaught exception")
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        return " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
    if method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
        return params["entry"].get("text")
    return None
