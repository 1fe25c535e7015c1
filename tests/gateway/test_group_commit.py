"""Many writers at once through the daemon (CLI processes over the socket, HTTP) and beside
it (MCP over stdio, in its own process): group commit.

Writers that meet are committed in one round (see ``minarad.store.groupcommit``);
what a user sees must be what one-after-another commits would give: every
write once, one commit each with its own author, a stale ``If-Match`` refused,
and a repository the real ``git`` reads cleanly.
"""

from __future__ import annotations

import subprocess
import threading

import httpx

from tests.conftest import MINARA, git
from tests.gateway.conftest import TIMEOUT, Gateway
from tests.mcp.conftest import payload, run, stdio_client

CLI_WRITERS = 10
HTTP_WRITERS = 10
MCP_WRITERS, MCP_LINES = 2, 3


def _commits_of(ws, path: str) -> list[str]:
    return git(ws, "log", "--format=%an|%s", "--", path).splitlines()


def test_cli_and_http_writers_at_once_each_get_one_commit_and_nothing_is_lost(tmp_path):
    gw = Gateway(tmp_path).start()
    try:
        gw.cli("memory", "set", "shared.md", "# Shared", check=0)
        before = int(git(gw.ws, "rev-list", "--count", "HEAD"))
        http_done: list[int] = []

        def http_writer(n: int) -> None:
            with httpx.Client(base_url=gw.url, timeout=TIMEOUT, headers={
                    "Authorization": f"Bearer {gw.token}", "X-Minara-Author": f"http-{n}"}) as c:
                r = c.post("/v1/workspace/append/shared.md", json={"text": f"- http {n}"})
                if r.status_code == 200:
                    http_done.append(n)

        mcp_done: list[str] = []

        def mcp_writer(n: int) -> None:
            async def session() -> None:
                async with stdio_client(gw.env) as client:
                    for k in range(MCP_LINES):
                        payload(await client.call_tool("memory_append", {
                            "file": "shared.md", "text": f"- mcp {n} {k}"}))
                        mcp_done.append(f"- mcp {n} {k}")
            run(session())

        threads = [threading.Thread(target=http_writer, args=(n,)) for n in range(HTTP_WRITERS)]
        threads += [threading.Thread(target=mcp_writer, args=(n,)) for n in range(MCP_WRITERS)]
        procs = [subprocess.Popen([MINARA, "memory", "append", "shared.md", f"- cli {n}"],
                                  env={**gw.env, "MINARA_AUTHOR": f"cli-{n}"},
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for n in range(CLI_WRITERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for p in procs:
            assert p.wait(timeout=120) == 0, p.stderr.read()
        assert sorted(http_done) == list(range(HTTP_WRITERS))
        assert len(mcp_done) == MCP_WRITERS * MCP_LINES
        writes = CLI_WRITERS + HTTP_WRITERS + len(mcp_done)

        text = (gw.ws / "shared.md").read_text()
        for line in [f"- cli {n}" for n in range(CLI_WRITERS)] + mcp_done + \
                [f"- http {n}" for n in range(HTTP_WRITERS)]:
            assert text.count(line + "\n") == 1, (line, text)
        assert int(git(gw.ws, "rev-list", "--count", "HEAD")) - before == writes
        authors = sorted(c.split("|")[0] for c in _commits_of(gw.ws, "shared.md")[:writes])
        assert [a for a in authors if a.startswith(("cli-", "http-"))] == sorted(
            [f"cli-{n}" for n in range(CLI_WRITERS)] + [f"http-{n}" for n in range(HTTP_WRITERS)])
        # each commit adds exactly its own line on top of the one before
        for sha in git(gw.ws, "rev-list", "HEAD", "-n", str(writes)).split():
            added = [ln for ln in git(gw.ws, "show", "--format=", sha, "--", "shared.md"
                                      ).splitlines() if ln.startswith("+- ")]
            assert len(added) == 1, added
        assert subprocess.run(["git", "-C", str(gw.ws), "fsck", "--strict"],
                              capture_output=True).returncode == 0
        assert git(gw.ws, "status", "--porcelain") == ""
        assert git(gw.ws, "reflog").count("\n") >= int(git(gw.ws, "rev-list", "--count",
                                                            "HEAD"))
    finally:
        gw.stop()


def test_writes_with_one_stale_base_at_once_commit_exactly_one(tmp_path):
    gw = Gateway(tmp_path).start()
    try:
        first = gw.api.put("/v1/workspace/files/race.md", json={"text": "v0\n"})
        tag = first.headers["etag"]
        codes: list[int] = []

        def put(n: int) -> None:
            with httpx.Client(base_url=gw.url, timeout=TIMEOUT,
                              headers={"Authorization": f"Bearer {gw.token}"}) as c:
                r = c.put("/v1/workspace/files/race.md", json={"text": f"writer {n}\n"},
                          headers={"If-Match": tag})
                codes.append(r.status_code)

        threads = [threading.Thread(target=put, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(codes) == [200] + [409] * 5
        assert len(_commits_of(gw.ws, "race.md")) == 2
        assert (gw.ws / "race.md").read_text().startswith("writer ")
        assert git(gw.ws, "status", "--porcelain") == ""
    finally:
        gw.stop()


STREAM_CLIENTS, STREAM_WRITES = 8, 6


def test_clients_writing_back_to_back_each_get_their_own_commits(tmp_path):
    """Eight clients each rewrite a file of their own, each sending its next write as soon
    as the last is answered (rounds then wait for them to come back): every write is
    acknowledged and committed once, with its author, in order; a stale ``If-Match``
    is still refused; git reads the repository cleanly."""
    gw = Gateway(tmp_path).start()
    try:
        before = int(git(gw.ws, "rev-list", "--count", "HEAD"))
        tags: dict[int, list[str]] = {}
        failures: list[str] = []

        def client(n: int) -> None:
            with httpx.Client(base_url=gw.url, timeout=TIMEOUT, headers={
                    "Authorization": f"Bearer {gw.token}", "X-Minara-Author": f"http-{n}"}) as c:
                tags[n] = []
                for k in range(STREAM_WRITES):
                    r = c.put(f"/v1/workspace/files/stream/{n}.md", json={"text": f"{n}.{k}\n"},
                              headers={"If-Match": tags[n][-1]} if tags[n] else {})
                    if r.status_code != 200:
                        failures.append(f"{n}.{k}: {r.status_code} {r.text}")
                        return
                    tags[n].append(r.headers["etag"])

        threads = [threading.Thread(target=client, args=(n,)) for n in range(STREAM_CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not failures, failures
        writes = STREAM_CLIENTS * STREAM_WRITES
        assert int(git(gw.ws, "rev-list", "--count", "HEAD")) - before == writes
        for n in range(STREAM_CLIENTS):
            log = _commits_of(gw.ws, f"stream/{n}.md")
            assert [line.split("|")[0] for line in log] == [f"http-{n}"] * STREAM_WRITES
            texts = [git(gw.ws, "show", f"{sha}:stream/{n}.md") for sha in git(
                gw.ws, "log", "--format=%H", "--reverse", "--", f"stream/{n}.md").split()]
            assert texts == [f"{n}.{k}\n" for k in range(STREAM_WRITES)]
        stale = gw.api.put("/v1/workspace/files/stream/0.md", json={"text": "stale\n"},
                           headers={"If-Match": tags[0][0]})
        assert stale.status_code == 409 and stale.json()["error"] == "memory_version_conflict"
        assert (gw.ws / "stream" / "0.md").read_text() == f"0.{STREAM_WRITES - 1}\n"
        assert subprocess.run(["git", "-C", str(gw.ws), "fsck", "--strict"],
                              capture_output=True).returncode == 0
        # the rounds' index (staged before HEAD moved, put in place after) holds each
        # file's stat as renamed into place: git finds nothing to refresh
        assert not (gw.ws / ".git" / "index.lock").exists()
        assert git(gw.ws, "diff-files", "--name-only") == ""
        assert git(gw.ws, "status", "--porcelain") == ""
    finally:
        gw.stop()
