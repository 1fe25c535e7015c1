"""The live soak's local writers: editors, the CLI, the HTTP gateway, MCP, and syncs.

Each writer is a loop run in a thread until the soak stops it; every write
it makes carries a token no other write carries (``zq-<writer>-<verb>-N``)
and is put in the :class:`~soak_checks.Ledger` only once it was
acknowledged (exit status 0, HTTP 200, an MCP result that is not an
error). Used by ``bench/soak_live.py``; not run on its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field


def blob_id(data: bytes) -> str:
    """The git blob id of ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Soak:
    """The running soak: workspace, remote, daemon and its endpoints."""

    env: dict
    ws: str
    bare: str
    root: str
    daemon: subprocess.Popen
    log_path: str
    http_url: str
    http_token: str
    mcp_url: str
    mcp_token: str
    minara: str
    began: float = 0.0
    rss_max: float = 0.0
    odd_dir_made: bool = False
    odd_names: list[bytes] = field(default_factory=list)
    #: The peak RSS (MB) of any ``minara`` process, by command (``sync``, ``memory``...).
    cli_rss: dict[str, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def git(self, *args, check: bool = False) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", self.ws, *args], capture_output=True, check=check)

    def head_has(self, token: str) -> bool:
        """True when a file under soak/ at the workspace's HEAD holds ``token``."""
        return self.git("grep", "-q", "-F", token, "HEAD", "--", "soak/").returncode == 0

    def shared_path(self) -> str:
        """The file every writer appends to this minute (a new one each minute)."""
        return f"soak/shared-{int((time.monotonic() - self.began) // 60)}.md"

    def sample_rss(self) -> None:
        try:
            with open(f"/proc/{self.daemon.pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        self.rss_max = max(self.rss_max, int(line.split()[1]) / 1024)
        except OSError:
            pass

    def odd_local_name(self, name: bytes) -> None:
        """A file whose name is not UTF-8 appears in the workspace (never versioned)."""
        full = os.path.join(os.fsencode(self.ws), name)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as fh:
            fh.write(b"a name that is not UTF-8\n")
        self.odd_names.append(name)
        self.odd_dir_made = self.odd_dir_made or b"/" in name

    def cli(self, *args, timeout: float = 300) -> tuple[bool, str, dict]:
        """Run ``minara --json ARGS``; return (ok, error code, JSON answer)."""
        argv = [os.fsencode(self.minara), b"--json", *(a if isinstance(a, bytes) else a.encode()
                                                       for a in args)]
        code, out, err, rss = run_measured(argv, self.env, timeout)
        with self.lock:
            self.cli_rss[args[0]] = max(self.cli_rss.get(args[0], 0.0), rss)
        if code == 0:
            return True, "", _json(out)
        answer = _json(err) or _json(out) or {"message": err.decode(errors="replace")[-300:]}
        return False, str(answer.get("error") or f"exit_{code}"), answer


def run_measured(argv: list, env: dict, timeout: float) -> tuple[int, bytes, bytes, float]:
    """Run ``argv``; return (exit status, stdout, stderr, the process's peak RSS in MB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
            time.sleep(0.01)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read(), usage.ru_maxrss / 1024


def _json(raw: bytes) -> dict:
    try:
        found = json.loads(raw)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _said(answer: dict) -> str:
    return str(answer.get("message") or "")


class Writer:
    """One writer's loop: ``step`` until stopped; an exception is counted, never fatal."""

    kind = "writer"
    pause = 0.05

    def __init__(self, soak: Soak, ledger, index: int):
        self.soak, self.ledger, self.index = soak, ledger, index
        self.name = f"{self.kind.split('-')[0]}{index}"
        self.serial = 0

    def token(self, verb: str) -> str:
        self.serial += 1
        return f"zq-{self.name}-{verb}-{self.serial}"

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.step()
            except Exception as exc:  # noqa: BLE001 - counted and reported, never fatal
                self.ledger.error(self.kind, f"exception:{type(exc).__name__}", unexpected=True)
            stop.wait(self.pause)

    def step(self) -> None:
        raise NotImplementedError


class EditorWriter(Writer):
    """Saves a growing file, atomically (temp + rename) or in place (truncate + write)."""

    pause = 0.2
    #: Lines per file before the editor moves to a new one (keeps hashing cheap).
    LINES = 60
    #: Every how many saves a stale object lock is planted for the content first.
    POISON_EVERY = 10

    def __init__(self, soak: Soak, ledger, index: int, style: str):
        self.kind = f"editor-{style}"
        super().__init__(soak, ledger, index)
        self.style, self.file, self.lines = style, 0, []

    def step(self) -> None:
        if len(self.lines) >= self.LINES:
            self.file, self.lines = self.file + 1, []
        rel = f"editors/{self.style}{self.index}-{self.file}.md"
        self.lines.append(f"- {self.token('save')}")
        data = ("# an editor's file\n\n" + "\n".join(self.lines) + "\n").encode()
        poison = self.serial % self.POISON_EVERY == 0
        if poison:
            self._plant_lock(blob_id(data))
        full = os.path.join(self.soak.ws, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        (self._save_atomic if self.style == "rename" else self._save_in_place)(full, data)
        self.ledger.saved(self.kind, rel, data)
        if poison:
            self._await_commit(rel, blob_id(data))

    def _save_atomic(self, full: str, data: bytes) -> None:
        tmp = full + ".tmp"  # an ignored name (*.tmp), as editors' temp files are
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, full)

    def _save_in_place(self, full: str, data: bytes) -> None:
        with open(full, "r+b" if os.path.exists(full) else "wb") as fh:
            fh.seek(0)
            fh.truncate()
            fh.write(data[:len(data) // 2])
            fh.flush()
            time.sleep(0.002)  # a half-written file, as a slow editor leaves it for a moment
            fh.write(data[len(data) // 2:])

    def _plant_lock(self, blob: str) -> None:
        """The 0-byte lock a writer killed while storing ``blob`` leaves, made old."""
        folder = os.path.join(self.soak.ws, ".git", "objects", blob[:2])
        os.makedirs(folder, exist_ok=True)
        lock = os.path.join(folder, blob[2:] + ".lock")
        open(lock, "wb").close()
        os.utime(lock, (time.time() - 3600, time.time() - 3600))

    def _await_commit(self, rel: str, blob: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            head = self.soak.git("rev-parse", f"HEAD:{rel}")
            if head.returncode == 0 and head.stdout.decode().strip() == blob:
                self.ledger.note("saves of a content with a stale object lock, committed")
                return
            time.sleep(0.1)
        self.ledger.error(self.kind, "locked_content_never_committed", unexpected=True)


class CliWriter(Writer):
    """``minara memory append``, ``memory set``, ``wiki put``; a name that is not UTF-8."""

    kind = "cli"
    pause = 0.0
    VERBS = ("append", "set", "append", "wiki", "append", "set", "append", "wiki", "append",
             "odd")

    def step(self) -> None:
        verb = self.VERBS[self.serial % len(self.VERBS)]
        token = self.token(verb)
        if verb == "append":
            ok, code, said = self.soak.cli("memory", "append", self.soak.shared_path(),
                                           f"- {token}")
            self.ledger.acked(self.kind, ok, code, append=token, message=_said(said))
        elif verb == "set":
            rel, text = f"soak/cli{self.index}-set.md", f"# set by the CLI\n\n- {token}\n"
            ok, code, said = self.soak.cli("memory", "set", rel, text)
            self.ledger.acked(self.kind, ok, code, version=token, final=(rel, text, "equal"),
                              message=_said(said))
        elif verb == "wiki":
            page = f"soak/cli{self.index}-page"
            ok, code, said = self.soak.cli("wiki", "put", page, f"# A page\n\n{token}\n")
            self.ledger.acked(self.kind, ok, code, version=token,
                              final=(f"wiki/{page}.md", token, "contains"), message=_said(said))
        else:
            ok, code, said = self.soak.cli("memory", "set", b"soak/x\xff-%d.md" % self.index,
                                           "x")
            if not ok and code == "path_not_utf8":
                self.ledger.note("CLI sets of a name that is not UTF-8, refused path_not_utf8")
            else:
                self.ledger.error(self.kind, f"odd_name_not_refused:{code or 'accepted'}",
                                  unexpected=True, message=_said(said))


class HttpWriter(Writer):
    """The gateway: append to the shared and an own file, PUT an own file, the clash line."""

    kind = "http"

    def __init__(self, soak: Soak, ledger, index: int):
        super().__init__(soak, ledger, index)
        import httpx

        self.client = httpx.Client(base_url=soak.http_url, timeout=120,
                                   headers={"Authorization": f"Bearer {soak.http_token}"})

    def step(self) -> None:
        verb = ("shared", "own", "set", "shared", "clash")[self.serial % 5]
        if verb == "clash" and self.index != 0:
            verb = "own"
        token = self.token(verb)
        if verb in ("shared", "own"):
            rel = self.soak.shared_path() if verb == "shared" else f"soak/http{self.index}.md"
            reply = self.client.post(f"/v1/workspace/append/{rel}", json={"text": f"- {token}"})
            self._acked(reply, append=token)
        elif verb == "set":
            rel, text = f"soak/http{self.index}-set.md", f"# set over HTTP\n\n- {token}\n"
            reply = self.client.put(f"/v1/workspace/files/{rel}", json={"text": text})
            self._acked(reply, version=token, final=(rel, text, "equal"))
        else:
            text = f"line 0\nline 1\nline three: {token}\nline 3\nline 4\n"
            reply = self.client.put("/v1/workspace/files/soak/clash.md", json={"text": text})
            self._acked(reply, version=token)

    def _acked(self, reply, **wrote) -> None:
        code, body = "", {}
        if reply.status_code != 200:
            body = _json(reply.content)
            code = f"{reply.status_code} {body.get('error', '')}".strip()
        self.ledger.acked(self.kind, reply.status_code == 200, code,
                          unexpected=reply.status_code >= 500,
                          message=_said(body) or reply.text[:300], **wrote)


class McpWriter(Writer):
    """The daemon's MCP endpoint through the official SDK client (one session, kept)."""

    kind = "mcp"
    version: int | str = 0

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                asyncio.run(self._session(stop))
            except Exception as exc:  # noqa: BLE001 - a lost session is counted, then renewed
                self.ledger.error(self.kind, f"session_lost:{type(exc).__name__}",
                                  unexpected=True)
                stop.wait(1.0)

    async def _session(self, stop: threading.Event) -> None:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        headers = {"Authorization": f"Bearer {self.soak.mcp_token}",
                   "X-Minara-Agent": f"soak-{self.name}"}
        transport = streamable_http_client(self.soak.mcp_url, http_client=httpx2.AsyncClient(
            headers=headers, timeout=120))
        async with Client(transport, read_timeout_seconds=120) as client:
            while not stop.is_set():
                await self._step(client)
                await asyncio.sleep(self.pause)

    async def _step(self, client) -> None:
        set_now = self.serial % 3 == 2
        token = self.token("set" if set_now else "append")
        if set_now:
            rel, text = f"soak/mcp{self.index}-set.md", f"# set over MCP\n\n- {token}\n"
            result = await client.call_tool("memory_set", {"file": rel, "text": text,
                                                           "base": self.version})
            wrote = {"version": token, "final": (rel, text, "equal")}
        else:
            result = await client.call_tool("memory_append", {
                "file": self.soak.shared_path(), "text": f"- {token}"})
            wrote = {"append": token}
        code, text, got = "", "", result.structured_content or {}
        if result.is_error:
            text = result.content[0].text if result.content else ""
            code = str(_json(text[text.find("{"):].encode()).get("error") or "tool_error")
        elif got.get("conflict"):  # only this writer sets the file: a conflict is a bug
            code, text = str(got.get("error")), str(got.get("message"))
            self.version = got.get("current_version", self.version)
        elif set_now:
            self.version = got.get("version", self.version)
        self.ledger.acked(self.kind, not code, code, message=text, **wrote)


class Syncer(Writer):
    """``minara sync`` every few seconds (the daemon syncs after commits as well)."""

    kind = "sync"

    def __init__(self, soak: Soak, ledger, every: float):
        super().__init__(soak, ledger, 0)
        self.pause = every

    def step(self) -> None:
        ok, code, said = self.soak.cli("sync", timeout=600)
        self.ledger.acked(self.kind, ok, code, message=_said(said))
