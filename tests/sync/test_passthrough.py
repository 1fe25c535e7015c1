"""A remote written by plain git: what minara cannot check out passes through, and what git
itself would refuse is refused before any ref records it. Real ``minara`` processes, a
bare remote, every outcome checked with the stock git CLI."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import assert_repo_sound, git
from tests.sync.conftest import copy_joined, joined_once, run_on

_USER = ["-c", "user.name=Else", "-c", "user.email=else@example.com"]
_BIG = 100_000


def _run(env, ws, *args, check: int | None = 0) -> subprocess.CompletedProcess:
    return run_on(env, ws, *args, check=check, extra_env={"MINARA_MAX_FILE_BYTES": str(_BIG)})


@pytest.fixture(scope="module")
def one_joined(tmp_path_factory) -> Path:
    """Machine ``ws`` joined to a bare remote, built once (see :func:`copy_joined`)."""
    return joined_once(tmp_path_factory.mktemp("one-joined"), ("ws",),
                       {"MINARA_MAX_FILE_BYTES": str(_BIG)})


@pytest.fixture
def bare(tmp_path, one_joined) -> Path:
    """The bare remote ``tmp_path/remote.git`` with ``tmp_path/ws`` joined to it: a copy
    of the state ``minara remote add`` and a first ``minara sync`` leave."""
    return copy_joined(one_joined, tmp_path, {"ws": "ws"})


def _joined(env, tmp_path: Path, bare: Path | str) -> Path:
    """A workspace whose first sync made ``bare`` hold its seeded files (for a folder
    remote, the ``bare`` fixture copied that state in already)."""
    ws = tmp_path / "ws"
    if not (ws / ".git").exists():
        _run(env, ws, "remote", "add", "origin", bare)
        _run(env, ws, "sync")
    return ws


def _plain_git(bare: Path, tmp_path: Path, change) -> Path:
    """Clone ``bare`` with git, let ``change`` stage something, commit and push it."""
    clone = tmp_path / "elsewhere"
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    change(clone)
    git(clone, *_USER, "commit", "-qm", "made with plain git")
    git(clone, "push", "-q", "origin", "HEAD:main")
    return clone


def _entry(repo: Path, path: str, rev: str = "main") -> str:
    """``mode type id`` of ``path`` in ``rev`` as ``git ls-tree`` shows it ('' if absent)."""
    out = subprocess.run(["git", "-C", str(repo), "ls-tree", "-z", rev, "--", path],
                         capture_output=True, check=True).stdout
    return out.split(b"\t", 1)[0].decode() if out else ""


def _add_file(name: str, data: bytes = b"made elsewhere\n"):
    def change(clone: Path) -> None:
        target = clone / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        git(clone, "add", "-f", "--", name)
    return change


def _add_symlink(clone: Path) -> None:
    os.symlink("USER.md", clone / "link.md")
    git(clone, "add", "link.md")


def _add_submodule(clone: Path) -> None:
    git(clone, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},vendor/lib")


#: (id, change made with plain git, the path it adds, words of the reason minara gives)
PASSING = [
    ("symlink", _add_symlink, "link.md", "symbolic link"),
    ("submodule", _add_submodule, "vendor/lib", "submodule"),
    ("too-large", _add_file("big.md", b"x" * (_BIG + 1)), "big.md", "over the 100,000-byte"),
    ("ignored-ds-store", _add_file("wiki/.DS_Store"), "wiki/.DS_Store", "ignored"),
    ("ignored-tmp", _add_file("draft.tmp"), "draft.tmp", "ignored"),
    ("ignored-soul-state", _add_file(".soul-state.json", b"{}\n"), ".soul-state.json",
     "ignored"),
    ("folder-name", _add_file("memory"), "memory", "daily journal's folder"),
    ("control-char", _add_file("bell\x07.md"), "bell\x07.md", "control character"),
    ("gitmodules", _add_file(".gitmodules", b'[submodule "x"]\n\tpath = x\n\turl = ../x\n'),
     ".gitmodules", ".gitmodules"),
]


@pytest.mark.parametrize("change, path, reason", [p[1:] for p in PASSING],
                         ids=[p[0] for p in PASSING])
def test_what_minara_cannot_check_out_passes_through_and_sync_goes_on(env, tmp_path, bare,
                                                                      change, path, reason):
    ws = _joined(env, tmp_path, bare)
    clone = _plain_git(bare, tmp_path, change)
    made = _entry(clone, path, "HEAD")
    (ws / "USER.md").write_text((ws / "USER.md").read_text() + "\nA local line.\n")

    out = _run(env, ws, "sync").stdout  # a merge: both sides moved
    assert f"not checked out: {path!r}" in out and reason in out and "fix:" in out
    assert _entry(bare, path) == made  # the shared remote keeps it, as made
    assert "A local line." in git(bare, "show", "main:USER.md")
    assert_repo_sound(ws)  # git fsck --strict, git status clean (skip-worktree)
    git(bare, "fsck", "--strict", "--no-progress")
    assert f"not checked out: {path!r}" in _run(env, ws, "status", check=None).stdout
    doctor = _run(env, ws, "doctor", check=None).stdout
    assert "sync-held" in doctor and (repr(path) in doctor or "submodule(s) kept" in doctor)

    (ws / "MEMORY.md").write_text((ws / "MEMORY.md").read_text() + "\n- one more\n")
    assert "pushed" in _run(env, ws, "sync").stdout  # sync keeps working
    assert _entry(bare, path) == made and "- one more" in git(bare, "show", "main:MEMORY.md")
    assert_repo_sound(ws)
    git(clone, "pull", "-q", "--no-rebase")  # and the plain-git side still has it
    assert _entry(clone, path, "HEAD") == made


def test_a_fast_forward_keeps_a_symlink_and_its_removal_too(env, tmp_path, bare):
    ws = _joined(env, tmp_path, bare)
    clone = _plain_git(bare, tmp_path, _add_symlink)
    _run(env, ws, "sync")  # only the remote moved: a fast-forward to its very commit
    assert git(ws, "rev-parse", "HEAD") == git(clone, "rev-parse", "HEAD")
    assert_repo_sound(ws)

    _plain_git(bare, tmp_path, lambda c: git(c, "rm", "-q", "link.md"))
    (ws / "USER.md").write_text((ws / "USER.md").read_text() + "\nLocal.\n")
    _run(env, ws, "sync")
    assert _entry(bare, "link.md") == "" and _entry(ws, "link.md", "HEAD") == ""
    assert "Local." in git(bare, "show", "main:USER.md")
    assert_repo_sound(ws)
    assert "link.md" not in _run(env, ws, "status", check=None).stdout


def test_a_remote_gitignore_hiding_a_tracked_file_is_taken_and_sync_goes_on(env, tmp_path,
                                                                             bare):
    ws = _joined(env, tmp_path, bare)
    _plain_git(bare, tmp_path, _add_file("notes/keep.md"))
    _run(env, ws, "sync")
    hide = (ws / ".gitignore").read_bytes() + b"notes/\n"
    _plain_git(bare, tmp_path, _add_file(".gitignore", hide))
    (ws / "USER.md").write_text((ws / "USER.md").read_text() + "\nLocal.\n")

    _run(env, ws, "sync")
    assert (ws / ".gitignore").read_bytes() == hide
    assert _entry(bare, "notes/keep.md") and "Local." in git(bare, "show", "main:USER.md")
    assert_repo_sound(ws)


def _hostile_commit(bare: Path, name: bytes, mode: int, data: bytes,
                    author: bytes = b"Else <else@example.com>") -> str:
    """Commit on ``bare``'s main a tree holding an entry git itself refuses (made with
    dulwich: git's own tools will not write one)."""
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo

    with Repo(str(bare)) as repo:
        parent = repo.refs[b"refs/heads/main"]
        blob = Blob.from_string(data)
        tree = Tree()
        for entry in repo[repo[parent].tree].items():
            tree.add(entry.path, entry.mode, entry.sha)
        tree.add(name, mode, blob.id)
        commit = Commit()
        commit.tree, commit.parents = tree.id, [parent]
        commit.author = commit.committer = author
        commit.author_time = commit.commit_time = 1_700_000_000
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = b"hostile\n"
        for obj in (blob, tree, commit):
            repo.object_store.add_object(obj)
        repo.refs[b"refs/heads/main"] = commit.id
        return commit.id.decode()


HOSTILE = [
    ("dotdot", b"..", 0o100644, b"x\n"),
    ("dotgit", b".git", 0o100644, b"[core]\n"),
    ("dotgit-upper", b".GIT", 0o100644, b"[core]\n"),
    ("dotgit-ntfs", b"git~1", 0o100644, b"x\n"),
    ("gitmodules-symlink", b".gitmodules", 0o120000, b"USER.md"),
    ("gitmodules-option-url", b".gitmodules", 0o100644,
     b'[submodule "x"]\n\tpath = x\n\turl = --upload-pack=touch${IFS}pwned\n'),
    ("gitmodules-climbing-name", b".gitmodules", 0o100644,
     b'[submodule "../../hooks"]\n\tpath = x\n\turl = ./x\n'),
    ("malformed-author", b"fine.md", 0o100644, b"x\n", b"Else else@example.com"),
]


@pytest.mark.parametrize("hostile", [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_an_object_git_refuses_is_refused_before_any_ref_and_the_workspace_stays_sound(
        env, tmp_path, bare, hostile):
    ws = _joined(env, tmp_path, bare)
    before = git(ws, "rev-parse", "refs/remotes/origin/main")
    bad = _hostile_commit(bare, *hostile)

    failed = _run(env, ws, "sync", check=None)
    assert failed.returncode != 0 and bad[:12] in failed.stderr and "refused" in failed.stderr
    assert git(ws, "rev-parse", "refs/remotes/origin/main") == before
    assert_repo_sound(ws)  # nothing of the commit is in .git/objects
    assert not list((ws / ".git" / "objects").glob("tmp_objdir-*"))
    assert bad[:12] in _run(env, ws, "status", check=None).stdout
    assert bad[:12] in _run(env, ws, "doctor", check=None).stdout

    (ws / "USER.md").write_text((ws / "USER.md").read_text() + "\nStill writing.\n")
    _run(env, ws, "sync", check=None)
    assert "Still writing." in git(ws, "show", "HEAD:USER.md")  # the workspace goes on
    assert_repo_sound(ws)


def test_over_the_git_protocol_entries_pass_through_and_a_hostile_commit_is_refused(
        env, tmp_path, git_server):
    url, bare = git_server
    ws = _joined(env, tmp_path, url)
    _plain_git(bare, tmp_path, _add_symlink)
    (ws / "USER.md").write_text((ws / "USER.md").read_text() + "\nLocal.\n")
    _run(env, ws, "sync")  # the remote's pack waits in a quarantine, then is admitted
    assert _entry(bare, "link.md").startswith("120000") and _entry(ws, "link.md", "HEAD")
    assert_repo_sound(ws)

    bad = _hostile_commit(bare, b"..", 0o100644, b"x\n")
    failed = _run(env, ws, "sync", check=None)
    assert failed.returncode != 0 and bad[:12] in failed.stderr
    assert_repo_sound(ws)
    assert not list((ws / ".git" / "objects").glob("tmp_objdir-*"))


def test_an_entry_whose_place_a_local_folder_takes_is_listed_and_stays_in_history(
        env, tmp_path, bare):
    ws = _joined(env, tmp_path, bare)
    _plain_git(bare, tmp_path, _add_file("notes/a.md"))
    _run(env, ws, "sync")

    def folder_to_symlink(clone: Path) -> None:
        git(clone, "rm", "-rq", "notes")
        os.symlink("USER.md", clone / "notes")
        git(clone, "add", "notes")

    clone = _plain_git(bare, tmp_path, folder_to_symlink)
    (ws / "notes" / "local.md").write_text("written here\n")

    out = _run(env, ws, "sync").stdout
    assert "only in the remote's commit: 'notes'" in out and "git mv" in out
    assert _entry(bare, "notes/local.md") and not (ws / "notes" / "a.md").exists()
    theirs = git(clone, "rev-parse", "HEAD").strip()
    assert git(bare, "rev-parse", "main^2").strip() == theirs  # the remote's commit stays
    assert _entry(bare, "notes", theirs).startswith("120000")
    assert "only in origin's commit: 'notes'" in _run(env, ws, "status", check=None).stdout
    assert_repo_sound(ws)


def test_a_refused_commit_is_not_fetched_again_until_the_remote_moves(env, tmp_path, bare):
    from dulwich.objects import Blob

    ws = _joined(env, tmp_path, bare)
    good = git(bare, "rev-parse", "main").strip()
    data = b"hostile and unique\n"
    bad = _hostile_commit(bare, b"git~1", 0o100644, data)
    failed = _run(env, ws, "--json", "sync", check=None).stderr
    assert json.loads(failed)["error"] == "remote_object_refused"
    assert "refused before" not in failed

    blob = Blob.from_string(data).id.decode()  # a second fetch could not even read it now
    (bare / "objects" / blob[:2] / blob[2:]).unlink()
    again = json.loads(_run(env, ws, "--json", "sync", check=None).stderr)
    assert again["error"] == "remote_object_refused" and again["commit"] == bad
    assert "refused before" in again["message"] and bad[:12] in again["message"]
    assert_repo_sound(ws)

    git(bare, "update-ref", "refs/heads/main", good)  # its author drops it: the remote moves
    _plain_git(bare, tmp_path, _add_file("after.md"))
    (ws / "USER.md").write_text((ws / "USER.md").read_text() + "\nStill writing.\n")
    _run(env, ws, "sync")
    assert (ws / "after.md").exists() and "Still writing." in git(bare, "show", "main:USER.md")
    assert_repo_sound(ws)
    git(bare, "reflog", "expire", "--expire=now", "--all")
    git(bare, "prune", "--expire=now")  # what its author dropped: then the remote is clean
    git(bare, "fsck", "--strict", "--no-progress")
