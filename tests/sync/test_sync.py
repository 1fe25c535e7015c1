"""Two machines and a bare repository: sync keeps one memory and loses no line."""

from __future__ import annotations

import subprocess

import pytest

from minarad.errors import MinaraError
from minarad.git.remotes import add_remote
from minarad.sync.engine import sync
from minarad.sync import conflict_copies
from tests.conftest import assert_repo_sound, git
from tests.sync.conftest import tree_of


def _sync(store, machine):
    return sync(store, "origin", machine=machine)


def _pair(machines, url):
    laptop, server = machines("laptop"), machines("server")
    for s in (laptop, server):
        add_remote(s.repo, "origin", str(url))
    _sync(laptop, "laptop")
    _sync(server, "server")  # unrelated seeds: merged once
    _sync(laptop, "laptop")
    return laptop, server


def _assert_one_memory(bare, tmp_path, *stores):
    trees = [tree_of(s.root) for s in stores]
    assert all(t == trees[0] for t in trees)
    for s in stores:
        assert_repo_sound(s.root)
    git(bare, "fsck", "--strict", "--no-progress")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    assert tree_of(clone) == trees[0]
    for path in trees[0]:
        assert (clone / path).read_bytes() == (stores[0].root / path).read_bytes()


def test_edits_on_both_sides_end_in_one_tree_with_every_line(machines, bare, tmp_path):
    laptop, server = _pair(machines, bare)
    assert laptop.head() == server.head() == git(bare, "rev-parse", "main").strip()
    # the same file through the store on both sides, different files in an editor
    laptop.append("MEMORY.md", "- laptop fact", author="agent-l")
    server.append("MEMORY.md", "- server fact", author="agent-s")
    (laptop.root / "notes").mkdir()
    (laptop.root / "notes" / "l.md").write_text("laptop note\n")
    (server.root / "USER.md").write_text((server.root / "USER.md").read_text() + "server edit\n")
    first = _sync(laptop, "laptop")
    assert first.action == "pushed" and first.pushed
    second = _sync(server, "server")
    assert second.action == "merge" and "MEMORY.md" in second.merged
    assert _sync(laptop, "laptop").action == "fast-forward"
    memory = (laptop.root / "MEMORY.md").read_text()
    assert memory.index("- server fact") < memory.index("- laptop fact")  # ours (server) first
    assert (server.root / "notes" / "l.md").read_text() == "laptop note\n"
    assert "server edit" in (laptop.root / "USER.md").read_text()
    merge = git(server.root, "log", "-1", "--format=%P%n%s%n%b", second.head).splitlines()
    assert len(merge[0].split()) == 2 and "MEMORY.md" in merge[1]
    assert laptop.history("MEMORY.md")[0].commit == second.head  # the history cache caught up
    _assert_one_memory(bare, tmp_path, laptop, server)


def test_a_binary_file_changed_on_both_sides_keeps_both_versions(machines, bare, tmp_path):
    laptop, server = _pair(machines, bare)
    (laptop.root / "pic.bin").write_bytes(b"\0laptop")
    (server.root / "pic.bin").write_bytes(b"\0server")
    _sync(laptop, "laptop")
    result = _sync(server, "server")
    assert result.conflicts == ("pic.conflict-server.bin",)
    _sync(laptop, "laptop")
    assert (laptop.root / "pic.bin").read_bytes() == b"\0laptop"  # published first keeps the name
    assert (laptop.root / "pic.conflict-server.bin").read_bytes() == b"\0server"
    assert conflict_copies(laptop) == ["pic.conflict-server.bin"]
    _assert_one_memory(bare, tmp_path, laptop, server)


def test_an_edit_saved_on_disk_is_committed_and_travels(machines, bare, tmp_path):
    laptop, server = _pair(machines, bare)
    (server.root / "TOOLS.md").write_text("edited in an editor\n")
    _sync(server, "server")
    _sync(laptop, "laptop")
    assert (laptop.root / "TOOLS.md").read_text() == "edited in an editor\n"
    _assert_one_memory(bare, tmp_path, laptop, server)


def test_an_unreachable_remote_is_one_clear_error(machines, tmp_path):
    laptop = machines("laptop")
    add_remote(laptop.repo, "origin", str(tmp_path / "nowhere.git"))
    head = laptop.head()
    with pytest.raises(MinaraError) as err:
        _sync(laptop, "laptop")
    assert err.value.code == "remote_unreachable"
    assert laptop.head() == head
    assert_repo_sound(laptop.root)


def test_a_push_from_a_stale_fetch_is_refused_and_the_remote_kept(machines, bare):
    from minarad.git import remotes

    laptop, server = _pair(machines, bare)
    before = git(bare, "rev-parse", "main").strip()
    laptop.append("MEMORY.md", "- laptop", author="a")
    server.append("MEMORY.md", "- server", author="b")
    _sync(laptop, "laptop")
    with pytest.raises(remotes.PushRejected):  # server still believes the remote is at before
        remotes.push(server.repo, str(bare), "main", server.head(), before)
    assert git(bare, "rev-parse", "main").strip() == laptop.head()


def test_machines_syncing_at_once_lose_no_line(machines, bare, tmp_path):
    import threading

    stores = _pair(machines, bare)
    errors = []

    def work(store, name):
        try:
            for i in range(4):
                store.append("MEMORY.md", f"- {name} {i}", author=name)
                _sync(store, name)
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s, n))
               for s, n in zip(stores, ("laptop", "server"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for s, n in zip(stores, ("laptop", "server")):
        _sync(s, n)
    _sync(stores[0], "laptop")
    text = (stores[0].root / "MEMORY.md").read_text()
    assert all(text.count(f"- {n} {i}\n") == 1 for n in ("laptop", "server")
               for i in range(4)), text
    _assert_one_memory(bare, tmp_path, *stores)


def test_a_second_conflict_on_one_file_keeps_the_first_copy(machines, bare, tmp_path):
    laptop, server = _pair(machines, bare)
    for round_ in ("1", "2"):
        (laptop.root / "pic.bin").write_bytes(b"\0laptop" + round_.encode())
        (server.root / "pic.bin").write_bytes(b"\0server" + round_.encode())
        _sync(laptop, "laptop")
        _sync(server, "server")
        _sync(laptop, "laptop")
    assert (laptop.root / "pic.conflict-server.bin").read_bytes() == b"\0server1"
    assert (laptop.root / "pic.conflict-server-2.bin").read_bytes() == b"\0server2"
    _assert_one_memory(bare, tmp_path, laptop, server)


def test_a_clashing_line_keeps_both_versions_where_it_was(machines, bare, tmp_path):
    from minarad.sync import sync_remote, status
    from minarad.config import load_settings

    laptop, server = _pair(machines, bare)
    text = "# Notes\n\nline one\nline two\nline three\nline four\n\n## Later\n\n- last\n"
    laptop.write("notes.md", text, author="op")
    _sync(laptop, "laptop")
    _sync(server, "server")
    laptop.write("notes.md", text.replace("line three", "line three (laptop)"), author="op")
    server.write("notes.md", text.replace("line three", "line three (server)"), author="op")
    _sync(laptop, "laptop")
    settings = load_settings(env={"MINARA_WORKSPACE_DIR": str(server.root), "HOME":
                                  str(tmp_path), "MINARA_CONFIG": "",
                                  "MINARA_SYNC_MACHINE": "server"})
    result = sync_remote(server, settings, "origin")
    assert result.action == "merge" and result.clashed == ("notes.md",)
    merged = (server.root / "notes.md").read_text()
    assert merged == text.replace("line three\n", "line three (server)\nline three (laptop)\n")
    assert status(server)["remotes"][0]["clashed"] == ["notes.md"]
    _sync(laptop, "laptop")
    _assert_one_memory(bare, tmp_path, laptop, server)


def test_time_travel_after_a_fast_forward_is_what_this_machine_held(machines, bare, tmp_path):
    import datetime as dt
    import time

    from minarad.store.timetravel import commit_at, read_at

    laptop, server = _pair(machines, bare)
    laptop.write("where.md", "on the laptop\n", author="op")
    _sync(laptop, "laptop")
    held = laptop.head()
    server.write("where.md", "on the server\n", author="op")  # not merged yet: two lines
    server_held = server.head()
    time.sleep(1.1)  # reflogs and commit times count whole seconds
    moment = dt.datetime.now().astimezone()
    time.sleep(1.1)
    assert _sync(server, "server").action == "merge"  # first parent: the server's line
    assert _sync(laptop, "laptop").action == "fast-forward"
    assert commit_at(laptop, moment) == held
    assert read_at(laptop, "where.md", moment)[0] == b"on the laptop\n"
    assert commit_at(server, moment) == server_held  # the side that merged: its own line
    assert read_at(server, "where.md", moment)[0] == b"on the server\n"
    log = git(laptop.root, "reflog", "--format=%gs")
    assert "fast-forward (sync:origin)" in log and "commit (" in log
    git(laptop.root, "fsck", "--strict", "--no-progress")


def test_an_object_of_a_folder_remote_that_does_not_hash_to_its_id_is_refused(
        machines, bare, tmp_path):
    """A remote in a folder whose object's file holds other bytes (a damaged disk): the
    fetch says which object, keeps nothing of it, and the workspace stays sound."""
    import zlib

    laptop, server = _pair(machines, bare)
    clone = tmp_path / "elsewhere"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    (clone / "plain.md").write_text("made with plain git\n")
    git(clone, "add", "plain.md")
    git(clone, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qm", "plain")
    git(clone, "push", "-q", "origin", "HEAD:main")  # a small push: loose objects
    blob = git(clone, "rev-parse", "HEAD:plain.md").strip()
    loose = bare / "objects" / blob[:2] / blob[2:]
    assert loose.exists()
    loose.chmod(0o644)
    loose.write_bytes(zlib.compress(b"blob 6\0other\n"))
    tracking = git(server.root, "rev-parse", "refs/remotes/origin/main")

    with pytest.raises(MinaraError) as refused:
        _sync(server, "server")
    assert refused.value.code == "object_damaged" and blob in str(refused.value)
    assert git(server.root, "rev-parse", "refs/remotes/origin/main") == tracking
    assert subprocess.run(["git", "-C", str(server.root), "cat-file", "-e", blob],
                          stderr=subprocess.DEVNULL).returncode  # not kept
    assert not list((server.root / ".git" / "objects").glob("tmp_objdir-*"))
    assert not (server.root / "plain.md").exists()
    assert_repo_sound(server.root)
