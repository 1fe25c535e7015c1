"""One writer at a time; readers and would-be writers never crash."""

import subprocess
import sys
import textwrap

from minarad.index import Index

WRITER = textwrap.dedent("""
    import subprocess, sys
    from pathlib import Path
    from minarad.index import Index

    root, index_dir = Path(sys.argv[1]), Path(sys.argv[2])
    index = Index(root, index_dir)
    git = ["git", "-c", "user.name=w", "-c", "user.email=w@x"]
    for i in range(12):
        (root / "wiki" / f"w{i}.md").write_text(f"# W{i}\\n\\nwritten{i} steady\\n")
        subprocess.run(git + ["add", "-A"], cwd=root, check=True)
        subprocess.run(git + ["commit", "-qm", f"w{i}"], cwd=root, check=True)
        index.catch_up()
    print("done", flush=True)
""")

HOLDER = textwrap.dedent("""
    import sys
    from minarad.index.lock import try_writer_lock

    with try_writer_lock(sys.argv[1]) as owned:
        print("locked" if owned else "not-locked", flush=True)
        sys.stdin.readline()
""")


def test_reader_and_second_writer_while_another_process_writes(ws, index):
    ws.commit(**{"wiki__base.md": "# Base\n\nsteady anchor\n"})
    index.catch_up()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(ws.root), str(index.index_dir)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rounds = 0
    while writer.poll() is None or rounds < 3:
        assert "wiki/base.md" in [h.path for h in index.search("anchor")]
        index.catch_up()  # a would-be second writer: works or reports busy
        rounds += 1
    out, err = writer.communicate()
    assert writer.returncode == 0, err
    index.catch_up()
    assert len(index.search("steady", limit=50)) == 13


def test_busy_writer_lock_means_read_and_report_lag(ws, index):
    ws.commit(**{"MEMORY.md": "# M\n\nold words\n"})
    index.catch_up()
    ws.commit(**{"MEMORY.md": "# M\n\nnew words\n"})
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(index.lock_path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        stats = index.catch_up()
        assert stats.busy and stats.lag == 1
        assert [h.path for h in index.search("old")] == ["MEMORY.md"]
        assert index.status().writer_busy
        assert index.rebuild().busy
    finally:
        holder.communicate("\n")
    stats = index.catch_up()
    assert not stats.busy and stats.files_indexed == 1
    assert index.search("old") == []


def test_catch_up_waits_for_the_other_writer_when_asked(ws, index):
    import threading

    ws.commit(**{"MEMORY.md": "# M\n\nold words\n"})
    index.catch_up()
    ws.commit(**{"MEMORY.md": "# M\n\nnew words\n"})
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(index.lock_path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    result = {}
    waiter = threading.Thread(target=lambda: result.update(stats=index.catch_up(wait=60)))
    waiter.start()
    waiter.join(0.3)  # let it find the lock taken (the outcome does not depend on it)
    holder.communicate("\n")
    waiter.join()
    assert not result["stats"].busy and result["stats"].files_indexed == 1
    assert [h.path for h in index.search("new")] == ["MEMORY.md"]


def test_two_index_objects_in_one_process(ws, index):
    ws.commit(**{"MEMORY.md": "# M\n\nkoala\n"})
    other = Index(ws.root, index.index_dir)
    index.catch_up()
    assert [h.path for h in other.search("koala")] == ["MEMORY.md"]
    ws.commit(**{"MEMORY.md": "# M\n\nemu\n"})
    other.catch_up()
    assert [h.path for h in index.search("emu")] == ["MEMORY.md"]


def test_follower_catches_up_after_requests(ws, index):
    import threading

    from minarad.index.follower import IndexFollower

    done = threading.Event()
    follower = IndexFollower(index, on_done=lambda stats: done.set()).start()
    try:
        for i in range(5):
            ws.commit(**{"MEMORY.md": f"# M\n\nburst{i}\n"})
            follower.request()
        for _ in range(600):  # a safety net, not a timing assertion
            if index.search("burst4"):
                break
            done.wait(0.05)
            done.clear()
    finally:
        follower.stop()
    assert [h.path for h in index.search("burst4")] == ["MEMORY.md"]
