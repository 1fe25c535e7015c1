"""Syncs racing each other: no repository ever points at an object it lacks."""

from __future__ import annotations

import threading

from minarad.git import ancestry, remotes
from minarad.git.objects import has_commit
from minarad.git.remotes import add_remote
from minarad.sync import status
from minarad.sync.engine import sync
from tests.conftest import assert_repo_sound, git


def test_a_fetch_racing_a_push_names_only_a_commit_it_brought(machines, bare):
    """The remote moves while a fetch is under way: the fetch reports (and records
    as the remote-tracking branch) the commit it fetched, never the newer one whose
    objects it did not bring."""
    laptop, server = machines("laptop"), machines("server")
    for s in (laptop, server):
        add_remote(s.repo, "origin", str(bare))
    sync(laptop, "origin", machine="laptop")
    done = threading.Event()
    pushed = []

    def pusher():
        try:
            theirs = laptop.head()
            for i in range(25):
                laptop.append("MEMORY.md", f"- laptop {i}", author="agent-l")
                remotes.push(laptop.repo, str(bare), "main", laptop.head(), theirs)
                theirs = laptop.head()
                pushed.append(theirs)
        finally:
            done.set()

    thread = threading.Thread(target=pusher)
    thread.start()
    wrong = []
    while not done.is_set():
        got = remotes.fetch(server.repo, "origin", str(bare), "main")
        tracking = remotes.read_tracking(server.repo, "origin", "main")
        if not has_commit(server.repo, got) or not has_commit(server.repo, tracking):
            wrong.append(got)
    thread.join()
    assert not wrong, f"{len(wrong)} fetches named a commit they did not bring"
    assert remotes.fetch(server.repo, "origin", str(bare), "main") == pushed[-1]
    git(server.root, "fsck", "--strict", "--no-progress")
    assert_repo_sound(server.root)


def test_the_daemons_sync_and_a_cli_sync_on_one_machine_lose_nothing(machines, bare, tmp_path):
    """One workspace synced by two stores at once (the daemon's own and a ``minara
    sync`` beside it) while another machine pushes: every line arrives, every
    repository stays whole."""
    from minarad.store import Store

    laptop, server = machines("laptop"), machines("server")
    for s in (laptop, server):
        add_remote(s.repo, "origin", str(bare))
    for s, n in ((laptop, "laptop"), (server, "server"), (laptop, "laptop")):
        sync(s, "origin", machine=n)
    daemon_side = Store(server.root, operator="op-server")
    errors, stop = [], threading.Event()

    def guarded(work):
        def run():
            try:
                work()
            except Exception as exc:  # reported below
                errors.append(exc)
        return threading.Thread(target=run)

    def writer(store, name):
        def work():
            for i in range(5):
                store.append("MEMORY.md", f"- {name} {i}", author=name)
                sync(store, "origin", machine=name, commit_edits=False)
        return work

    def daemon_loop():
        while not stop.is_set():
            sync(daemon_side, "origin", machine="server", commit_edits=False)

    threads = [guarded(writer(laptop, "laptop")), guarded(writer(server, "server"))]
    background = guarded(daemon_loop)
    try:
        background.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        stop.set()
        background.join()
        daemon_side.close()
    assert not errors
    for s, n in ((laptop, "laptop"), (server, "server"), (laptop, "laptop")):
        sync(s, "origin", machine=n)
    for s in (laptop, server):
        text = (s.root / "MEMORY.md").read_text()
        assert all(text.count(f"- {n} {i}\n") == 1 for n in ("laptop", "server")
                   for i in range(5)), text
        assert_repo_sound(s.root)
    assert laptop.head() == server.head() == git(bare, "rev-parse", "main").strip()
    git(bare, "fsck", "--strict", "--no-progress")


def test_a_remote_tracking_branch_left_at_a_missing_commit_heals(machines, bare, tmp_path):
    """A repository where an earlier fetch recorded a commit it never brought
    (the remote-tracking branch names a commit it lacks) still answers
    ``minara status`` and syncs whole again."""
    laptop, server = machines("laptop"), machines("server")
    for s in (laptop, server):
        add_remote(s.repo, "origin", str(bare))
    for s, n in ((laptop, "laptop"), (server, "server"), (laptop, "laptop")):
        sync(s, "origin", machine=n)
    laptop.append("MEMORY.md", "- laptop 1", author="agent-l")
    sync(laptop, "origin", machine="laptop")
    lacking = laptop.head()
    laptop.append("MEMORY.md", "- laptop 2", author="agent-l")
    sync(laptop, "origin", machine="laptop")
    assert not has_commit(server.repo, lacking)
    (server.git_dir / "refs" / "remotes" / "origin" / "main").write_text(lacking + "\n")
    assert status(server)["remotes"][0]["name"] == "origin"  # status still answers
    server.append("MEMORY.md", "- server 1", author="agent-s")
    result = sync(server, "origin", machine="server")
    assert result.action == "merge" and result.pushed
    sync(laptop, "origin", machine="laptop")
    for s in (laptop, server):
        text = (s.root / "MEMORY.md").read_text()
        assert all(line in text for line in ("- laptop 1", "- laptop 2", "- server 1"))
        assert_repo_sound(s.root)
    git(bare, "fsck", "--strict", "--no-progress")


def _history(repo_dir, salt: int) -> tuple[str, str]:
    """Two machines' histories made within one second (as racing syncs make them):
    laptop merged server's first commit, then its second; server went on alone."""
    import os
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_DATE": "1700000000 +0000",
           "GIT_COMMITTER_DATE": "1700000000 +0000"}
    tree = subprocess.run(["git", "-C", str(repo_dir), "mktree"], input="",
                          capture_output=True, text=True, check=True).stdout.strip()

    def commit(message, *parents):
        args = ["git", "-C", str(repo_dir), "-c", "user.name=m", "-c", "user.email=m@x",
                "commit-tree", tree, "-m", f"{message} {salt}"]
        for parent in parents:
            args += ["-p", parent]
        return subprocess.run(args, env=env, capture_output=True, text=True,
                              check=True).stdout.strip()

    base = commit("base")
    s0, l0 = commit("server 0", base), commit("laptop 0", base)
    s1 = commit("server 1", s0)
    laptop = commit("merge", commit("merge", l0, s0), s1)
    return laptop, commit("server 3", commit("server 2", s1))


def test_the_merge_base_is_the_nearest_common_commit_as_git_says(tmp_path):
    """Merging from an older common commit would keep lines both sides share twice:
    the merge base is the one ``git merge-base`` names, also for commits made
    within one second."""
    from dulwich.repo import Repo

    for salt in range(30):
        repo_dir = tmp_path / f"r{salt}"
        git(tmp_path, "init", "-q", str(repo_dir))
        laptop, server = _history(repo_dir, salt)
        expected = git(repo_dir, "merge-base", "--all", laptop, server).split()
        with Repo(str(repo_dir)) as repo:
            assert [ancestry.merge_base(repo, laptop, server)] == expected, salt


def test_a_cli_sync_racing_the_daemons_sync_loses_nothing(env, tmp_path, bare, machines):
    """``minara sync`` run again and again beside a daemon that syncs every 0.1 s,
    while another machine pushes: every sync succeeds, every line arrives."""
    import subprocess

    from tests.conftest import MINARA
    from tests.daemon.conftest import DaemonProcess

    b = tmp_path / "b"
    laptop = machines("laptop")
    add_remote(laptop.repo, "origin", str(bare))
    sync(laptop, "origin", machine="laptop")

    def minara(*args):
        proc = subprocess.run([MINARA, "-w", str(b), *map(str, args)], capture_output=True,
                              text=True, env=env, timeout=120)
        assert proc.returncode == 0, f"{args}: {proc.stdout}{proc.stderr}"

    minara("init")
    minara("remote", "add", "origin", bare)
    minara("sync")
    (tmp_path / "log").mkdir()
    daemon = DaemonProcess({**env, "MINARA_WORKSPACE_DIR": str(b), "MINARA_SYNC_MACHINE": "b",
                            "MINARA_SYNC_INTERVAL": "0.1", "MINARA_SYNC_DEBOUNCE_S": "0.05",
                            "MINARA_STATE_DIR": str(tmp_path / "state-b")},
                           tmp_path / "log").start()
    errors = []

    def laptop_work():
        try:
            for i in range(4):
                laptop.append("MEMORY.md", f"- laptop {i}", author="agent-l")
                sync(laptop, "origin", machine="laptop")
        except Exception as exc:  # reported below
            errors.append(exc)

    other = threading.Thread(target=laptop_work)
    try:
        other.start()
        for i in range(4):
            minara("memory", "append", "MEMORY.md", f"- b {i}")
            minara("sync")
        other.join()
    finally:
        daemon.stop()
    assert not errors
    assert "damaged" not in daemon.log()
    minara("sync")
    sync(laptop, "origin", machine="laptop")
    lines = [f"- {n} {i}\n" for n in ("laptop", "b") for i in range(4)]
    for ws in (laptop.root, b):
        text = (ws / "MEMORY.md").read_text()
        assert all(text.count(line) == 1 for line in lines), text
        assert_repo_sound(ws)
    git(bare, "fsck", "--strict", "--no-progress")
