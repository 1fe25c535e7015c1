"""The reader: it sees every writer's commits, and an idle process lets it go (no polling)."""

import subprocess
import sys
import textwrap

from tests.index.conftest import paths

CATCH_UP = textwrap.dedent("""
    import sys
    from pathlib import Path
    from minarad.index import Index

    Index(Path(sys.argv[1]), Path(sys.argv[2])).catch_up()
""")

IDLE = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from minarad.index import Index

    def watchers():
        names = [open(f"/proc/self/task/{t}/comm").read() for t in os.listdir("/proc/self/task")]
        return sum(n.startswith("thread-tantivy") for n in names)

    index = Index(Path(sys.argv[1]), Path(sys.argv[2]))
    index.engine.reader_idle_s = 0.3
    found = [h.path for h in index.search("otter")]
    time.sleep(0.2)  # the watcher names itself once running
    print(found, watchers(), flush=True)
    deadline = time.monotonic() + 30
    while watchers() and time.monotonic() < deadline:
        time.sleep(0.1)
    print(watchers(), [h.path for h in index.search("otter")], flush=True)
""")


def test_a_search_sees_what_another_process_indexed(ws, index):
    ws.commit(**{"wiki__a.md": "# A\n\nthe badger sleeps\n"})
    index.catch_up()
    assert paths(index.search("badger")) == ["wiki/a.md"]  # the reader is open now
    ws.commit(**{"wiki__b.md": "# B\n\nthe heron fishes\n"})
    subprocess.run([sys.executable, "-c", CATCH_UP, str(ws.root), str(index.index_dir)],
                   check=True)
    assert paths(index.search("heron")) == ["wiki/b.md"]
    ws.commit(**{"wiki__b.md": "# B\n\nthe heron flew away\n"})
    subprocess.run([sys.executable, "-c", CATCH_UP, str(ws.root), str(index.index_dir)],
                   check=True)
    assert paths(index.search("fishes")) == []
    assert paths(index.search("flew")) == ["wiki/b.md"]


def test_an_idle_process_lets_its_reader_go_and_searches_again(ws, index):
    ws.commit(**{"wiki__o.md": "# O\n\nthe otter swims\n"})
    index.catch_up()
    run = subprocess.run([sys.executable, "-c", IDLE, str(ws.root), str(index.index_dir)],
                         check=True, capture_output=True, text=True)
    opened, released = run.stdout.splitlines()
    assert opened == "['wiki/o.md'] 1"  # tantivy's watcher reads meta.json while open
    assert released == "0 ['wiki/o.md']"
