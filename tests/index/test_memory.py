"""A long-running follower gives back the memory a burst of commits needed."""

import ctypes
import subprocess
import sys
import textwrap

import pytest

FOLLOWER_AFTER_BURST = textwrap.dedent("""
    import ctypes, random, subprocess, sys, threading
    from pathlib import Path
    from minarad.index import Index
    from minarad.index.follower import IndexFollower

    def rss_anon_kib():
        for line in open("/proc/self/status"):
            if line.startswith("RssAnon:"):
                return int(line.split()[1])

    root, index_dir = Path(sys.argv[1]), Path(sys.argv[2])
    git = ["git", "-c", "user.name=w", "-c", "user.email=w@x"]
    (root / "wiki").mkdir()
    (root / "wiki" / "base.md").write_text("# Base\\n\\nsteady\\n")
    subprocess.run(git + ["add", "-A"], cwd=root, check=True)
    subprocess.run(git + ["commit", "-qm", "base"], cwd=root, check=True)
    index = Index(root, index_dir)
    index.rebuild()
    rng = random.Random(5)
    for n in range(400):
        lines = (" ".join(f"w{rng.randint(0, 10**6)}" for _ in range(12)) for _ in range(200))
        (root / "wiki" / f"b{n}.md").write_text(f"# B{n}\\n\\n" + "\\n".join(lines))
    subprocess.run(git + ["add", "-A"], cwd=root, check=True)
    subprocess.run(git + ["commit", "-qm", "burst"], cwd=root, check=True)
    done = threading.Event()
    follower = IndexFollower(index, on_done=lambda stats: done.set())
    follower.start()
    done.wait(600)
    follower.stop()
    held = rss_anon_kib()
    ctypes.CDLL(None).malloc_trim(0)
    print(held - rss_anon_kib(), len(index.search("steady")))
""")


def _has_malloc_trim() -> bool:
    try:
        ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _has_malloc_trim(), reason="needs glibc (malloc_trim)")
def test_follower_hands_freed_memory_back_after_a_burst(tmp_path):
    (tmp_path / "ws").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=tmp_path / "ws", check=True)
    done = subprocess.run([sys.executable, "-c", FOLLOWER_AFTER_BURST, str(tmp_path / "ws"),
                           str(tmp_path / "index")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    still_held_kib, found = map(int, done.stdout.split())
    assert found == 1
    assert still_held_kib < 8 * 1024  # freed memory the follower did not give back
