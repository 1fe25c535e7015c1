"""Group commit in one process: transactions that meet share a round, one commit each.

The workspace lock is held while the writers arrive, so that they queue for
one round (what happens in the daemon whenever a round is being made durable).
"""

from __future__ import annotations

import threading

import pytest

from minarad.errors import VersionConflict
from minarad.store import Store, groupcommit
from minarad.store.lock import FileLock
from tests.conftest import assert_repo_sound, commit_count, git
from tests.daemon.conftest import wait_until


@pytest.fixture
def grouped(store):
    groupcommit.enable()
    try:
        yield store
    finally:
        groupcommit.enable(False)


def _in_one_round(ws, writes, in_order: bool = False) -> dict[int, object]:
    """Run each of ``writes`` (a function of a store) on a thread of its own while the
    workspace lock is held, let them commit once all wait; their results or errors.
    ``in_order``: the second and later writes queue one after another, in order."""
    outcome: dict[int, object] = {}

    def run(n: int) -> None:
        own = Store(ws, operator="tester")
        try:
            outcome[n] = writes[n](own)
        except Exception as exc:  # the test looks at it
            outcome[n] = exc
        finally:
            own.close()

    lock = FileLock(ws / ".git" / "minara" / "lock")
    lock.acquire()
    try:
        threads = [threading.Thread(target=run, args=(n,)) for n in range(len(writes))]
        threads[0].start()  # its round of one waits for the lock; the others queue
        wait_until(lambda: getattr(groupcommit.committer_for_path(ws), "running", 0) == 1,
                   what="the first round waiting for the lock")
        committer = groupcommit.committer_for_path(ws)
        for n, t in enumerate(threads[1:], 1):
            t.start()
            if in_order:
                wait_until(lambda n=n: committer.waiting() == n, what=f"write {n} queued")
        wait_until(lambda: committer.waiting() == len(writes) - 1, what="all queued")
    finally:
        lock.release()
    for t in threads:
        t.join()
    return outcome


def test_writers_in_one_round_get_one_commit_each_in_order(grouped, ws):
    grouped.write("shared.md", "# Shared\n", author="op")
    before = commit_count(ws)
    writes = [lambda s, n=n: s.append("shared.md", f"- line {n}", author=f"writer-{n}")
              for n in range(5)]
    writes.append(lambda s: s.write("notes/other.md", "other\n", author="writer-5"))
    outcome = _in_one_round(ws, writes)
    assert not [o for o in outcome.values() if isinstance(o, Exception)], outcome
    assert commit_count(ws) == before + 6
    assert list((ws / ".git" / "objects" / "pack").glob("pack-*.pack"))  # a round was made
    text = (ws / "shared.md").read_text()
    assert all(text.count(f"- line {n}\n") == 1 for n in range(5)), text
    log = git(ws, "log", "--format=%an %P", "-6").splitlines()
    assert sorted(line.split()[0] for line in log) == [f"writer-{n}" for n in range(6)]
    assert all(len(line.split()) == 2 for line in log)  # one parent each: a chain
    # each commit holds what it said it did: its own result's commit
    assert {o.commit for o in outcome.values()} == set(git(ws, "rev-list", "-6", "HEAD").split())
    assert git(ws, "reflog").count("\n") >= commit_count(ws)
    assert_repo_sound(ws)


def test_a_stale_base_in_a_round_is_refused_and_the_others_commit(grouped, ws):
    first = grouped.write("race.md", "v0\n", author="op")
    writes = [lambda s, n=n: s.write("race.md", f"writer {n}\n", base=first.sha256,
                                     author=f"writer-{n}") for n in range(4)]
    outcome = _in_one_round(ws, writes)
    won = [n for n, o in outcome.items() if not isinstance(o, Exception)]
    assert len(won) == 1 and all(isinstance(outcome[n], VersionConflict)
                                 for n in outcome if n not in won)
    assert (ws / "race.md").read_text() == f"writer {won[0]}\n"
    assert git(ws, "log", "-1", "--format=%an") == f"writer-{won[0]}\n"
    assert_repo_sound(ws)


def test_a_path_an_earlier_write_of_the_round_ignores_is_refused(grouped, ws):
    """Paths are checked as a write is collected; a round holding a ``.gitignore``
    write checks the later writes' paths again, under the rules as that write left
    them: a file the new rule ignores is refused, not versioned (``git status``
    would then disagree), and the other writes of the round commit."""
    grouped.write("keep.md", "keep\n", author="op")
    outcome = _in_one_round(ws, [
        lambda s: s.write("first.md", "first\n", author="writer-0"),
        lambda s: s.write(".gitignore", "private-*.md\n", author="writer-1"),
        lambda s: s.write("private-notes.md", "mine\n", author="writer-2"),
        lambda s: s.append("keep.md", "- more", author="writer-3")], in_order=True)
    assert getattr(outcome[2], "code", None) == "path_ignored", outcome
    assert not [o for n, o in outcome.items() if n != 2 and isinstance(o, Exception)], outcome
    assert "private-notes.md" not in git(ws, "ls-files")
    assert git(ws, "log", "--format=%an", "-3").split() == ["writer-3", "writer-1", "writer-0"]
    assert (ws / "keep.md").read_text() == "keep\n- more\n"
    assert_repo_sound(ws)


def test_a_writer_giving_up_on_its_answer_neither_stops_the_round_nor_loses_its_write(
        grouped, ws):
    """A write queued without waiting (as the gateway queues a PUT) whose caller gives up
    on the answer (a cancelled request): the answer cannot be cancelled, the write is
    committed with its round, and the committer goes on with the next writers."""
    from minarad.store.writing import collect_write

    grouped.write("first.md", "first\n", author="op")
    lock = FileLock(ws / ".git" / "minara" / "lock")
    lock.acquire()
    own = Store(ws, operator="tester")
    try:
        lead = threading.Thread(target=lambda: Store(ws).write("lead.md", "lead\n",
                                                                author="lead"))
        lead.start()  # its round of one waits for the lock; the next write queues
        wait_until(lambda: getattr(groupcommit.committer_for_path(ws), "running", 0) == 1,
                   what="the first round waiting for the lock")
        tx = collect_write(own, "given-up.md", "kept\n", author="gone", source="api")
        answer = groupcommit.commit_later(tx, just_collected=True)
        assert not answer.cancel() and not answer.done()
    finally:
        lock.release()
    lead.join()
    assert answer.result(timeout=60).files[0].changed
    after = grouped.write("after.md", "after\n", author="next")
    assert after.commit == git(ws, "rev-parse", "HEAD").strip()
    assert (ws / "given-up.md").read_text() == "kept\n"
    assert git(ws, "log", "--format=%an", "-3").split() == ["next", "gone", "lead"]
    own.close()
    assert_repo_sound(ws)


def test_writers_in_one_round_rewriting_one_file_build_on_each_other(grouped, ws):
    """A file rewritten by a write of the round waits beside its place until the round
    is durable; a later write of the same round that rewrites or appends to it must
    still start from that text: each commit holds its writer's change on top of the
    commit before it, and the file ends as the last commit says."""
    grouped.write("same.md", "v0\n", author="op")
    before = commit_count(ws)

    def change(n: int):
        if n % 2:
            return lambda s: s.append("same.md", f"- line {n}", author=f"writer-{n}")
        return lambda s: s.write("same.md", f"text {n}\n", author=f"writer-{n}")

    outcome = _in_one_round(ws, [change(n) for n in range(6)])
    assert not [o for o in outcome.values() if isinstance(o, Exception)], outcome
    assert commit_count(ws) == before + 6
    for line in git(ws, "log", "--format=%H %an", "-6").splitlines():
        commit, author = line.split()
        n = int(author.split("-")[1])
        text = git(ws, "show", f"{commit}:same.md")
        parent = git(ws, "show", f"{commit}~1:same.md")
        assert text == (parent + f"- line {n}\n" if n % 2 else f"text {n}\n"), (n, text)
        if n:  # the first waited for the lock alone; the others shared a round (a pack)
            assert not (ws / ".git" / "objects" / commit[:2] / commit[2:]).exists(), n
    assert (ws / "same.md").read_text() == git(ws, "show", "HEAD:same.md")
    assert not list(ws.rglob("*.minara-tmp"))  # every temporary was put in place
    assert_repo_sound(ws)


def test_a_writer_right_after_a_round_commits_alone_when_no_other_comes(grouped, ws):
    """After a round of several writers, the next round waits a little for them to come
    back; a lone writer that comes instead is still committed (alone), and the next
    after it too."""
    grouped.write("shared.md", "# Shared\n", author="op")
    outcome = _in_one_round(ws, [lambda s, n=n: s.append("shared.md", f"- line {n}",
                                                         author=f"writer-{n}")
                                 for n in range(4)])
    assert not [o for o in outcome.values() if isinstance(o, Exception)], outcome
    before = commit_count(ws)
    for n in range(2):
        result = grouped.write(f"after-{n}.md", f"after {n}\n", author=f"late-{n}")
        assert result.commit == git(ws, "rev-parse", "HEAD").strip()
    assert commit_count(ws) == before + 2
    assert git(ws, "log", "--format=%an", "-2").split() == ["late-1", "late-0"]
    assert (ws / "after-1.md").read_text() == "after 1\n"
    assert_repo_sound(ws)
