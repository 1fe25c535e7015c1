"""Fixtures for sync tests: a bare remote on disk, a git daemon on loopback, two machines."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import MINARA, child_env, git


def run_on(env, ws: Path, *args, check: int | None = 0,
           extra_env: dict | None = None) -> subprocess.CompletedProcess:
    """``minara -w WS ARGS`` as a machine runs it; its workspace is set up
    (``minara init``) on first use, as a machine's is before it syncs."""
    if args[:1] != ("init",) and not (ws / ".git").exists():
        subprocess.run([MINARA, "init", str(ws)], capture_output=True, env=env, check=True)
    proc = subprocess.run([MINARA, "-w", str(ws), *map(str, args)], capture_output=True,
                          text=True, env={**env, **(extra_env or {})}, timeout=120)
    if check is not None:
        assert proc.returncode == check, f"{args}: {proc.returncode}\n{proc.stdout}{proc.stderr}"
    return proc


def tree_of(repo, rev: str = "HEAD") -> dict[str, str]:
    """path -> blob id of ``rev`` as the real git CLI lists it."""
    out = git(repo, "ls-tree", "-r", rev)
    return {line.split("\t", 1)[1]: line.split()[2] for line in out.splitlines()}


def make_bare(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def joined_once(root: Path, machines: tuple[str, ...], extra_env: dict | None = None) -> Path:
    """``root`` holding ``remote.git`` and each of ``machines`` as after ``minara init``,
    ``minara remote add origin`` and a first ``minara sync``, one machine after the
    other (the first pushes its seeded files, the next ones merge them)."""
    env = child_env(root)
    bare = make_bare(root / "remote.git")
    for name in machines:
        run_on(env, root / name, "remote", "add", "origin", bare, extra_env=extra_env)
        run_on(env, root / name, "sync", extra_env=extra_env)
    return root


def copy_joined(template: Path, dest: Path, machines: dict[str, str]) -> Path:
    """Copy ``template`` (see :func:`joined_once`) into ``dest``: its remote to
    ``dest/remote.git`` (replacing an empty one there) and each machine ``name`` to
    ``dest/machines[name]``, whose ``origin`` then names the copy. Return the remote.

    The seeded, joined state is built once per module by real ``minara`` processes;
    each test takes a copy of it instead of starting those processes again.
    """
    bare = dest / "remote.git"
    if bare.exists():
        shutil.rmtree(bare)
    shutil.copytree(template / "remote.git", bare, symlinks=True)
    for name, to in machines.items():
        shutil.copytree(template / name, dest / to, symlinks=True)
        git(dest / to, "remote", "set-url", "origin", str(bare))
    return bare


@pytest.fixture(scope="module")
def two_joined(tmp_path_factory) -> Path:
    """Machines ``a`` then ``b`` joined to one bare remote (see :func:`copy_joined`)."""
    return joined_once(tmp_path_factory.mktemp("two-joined"), ("a", "b"))


@pytest.fixture
def bare(tmp_path) -> Path:
    """An empty bare repository: the meeting point."""
    return make_bare(tmp_path / "remote.git")


@pytest.fixture
def git_server(tmp_path):
    """A real ``git daemon`` on loopback serving ``tmp_path/served`` (push enabled).

    Yields ``(url of served/remote.git, bare path)``.
    """
    base = tmp_path / "served"
    base.mkdir()
    repo = make_bare(base / "remote.git")
    port = _free_port()
    proc = subprocess.Popen(["git", "daemon", "--reuseaddr", "--export-all",
                             "--enable=receive-pack", f"--base-path={base}",
                             "--listen=127.0.0.1", f"--port={port}", str(base)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("git daemon did not start") from None
            time.sleep(0.05)
    yield f"git://127.0.0.1:{port}/remote.git", repo
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def machines(tmp_path):
    """Two seeded stores, ``laptop`` and ``server``, closed after the test."""
    from minarad.store import Store

    made = []

    def make(name: str):
        s = Store(tmp_path / name, operator=f"op-{name}")
        s.ensure()
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


class _GitHttp:
    """``git http-backend`` behind a small threaded HTTP server on loopback, with Basic auth."""

    def __init__(self, root: Path, user: str, password: str):
        import base64
        import http.server
        import threading

        expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        project_root = str(root)

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _serve(self):
                if self.headers.get("Authorization") != expected:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = self._body()
                path, _, query = self.path.partition("?")
                env = {"GIT_PROJECT_ROOT": project_root, "GIT_HTTP_EXPORT_ALL": "1",
                       "PATH_INFO": path, "QUERY_STRING": query, "REMOTE_USER": user,
                       "REQUEST_METHOD": self.command, "REMOTE_ADDR": "127.0.0.1",
                       "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                       "CONTENT_LENGTH": str(len(body)), "PATH": "/usr/bin:/bin",
                       "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                       "GIT_PROTOCOL": self.headers.get("Git-Protocol", "")}
                out = subprocess.run(["git", "http-backend"], input=body, env=env,
                                     capture_output=True).stdout
                head, _, payload = out.partition(b"\r\n\r\n")
                status = 200
                headers = []
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.lower() == "status":
                        status = int(value.split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().strip() or b"0", 16)
                        if size == 0:
                            self.rfile.readline()
                            return b"".join(chunks)
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            do_GET = do_POST = _serve

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def http_server(tmp_path):
    """``git http-backend`` on loopback; yields ``(url without credentials, bare path)``.

    Basic auth is required: user ``me``, password ``s3cret``.
    """
    base = tmp_path / "http"
    base.mkdir()
    repo = make_bare(base / "remote.git")
    server = _GitHttp(base, "me", "s3cret")
    yield f"http://127.0.0.1:{server.port}/remote.git", repo
    server.close()
