"""SOUL.md change disclosure: noticed exactly once, baseline git-ignored."""

from minarad.turns.soul import STATE_FILE, check_soul, compare, notice_text, parse_state


def test_first_sight_is_silent_then_a_change_is_noticed_once(store, git):
    root = store.root
    assert check_soul(root, "t0") is None  # baseline recorded silently
    assert (root / STATE_FILE).is_file()
    assert check_soul(root, "t1") is None
    (root / "SOUL.md").write_text("# SOUL.md\n\nBe terse.\n")
    change = check_soul(root, "t2")
    assert change is not None and change.previous != change.current
    assert "edited" in notice_text(change)
    assert check_soul(root, "t3") is None
    assert check_soul(root, "t4") is None


def test_state_file_is_git_ignored(store, git):
    check_soul(store.root, "t0")
    assert git(store.root, "check-ignore", STATE_FILE).strip() == STATE_FILE
    assert STATE_FILE not in git(store.root, "status", "--porcelain")


def test_removed_soul_is_noticed(store):
    check_soul(store.root, "t0")
    (store.root / "SOUL.md").unlink()
    change = check_soul(store.root, "t1")
    assert change.current is None and "removed" in notice_text(change)


def test_unreadable_state_resets_silently(store):
    (store.root / STATE_FILE).write_text("{not json")
    assert check_soul(store.root, "t0") is None
    assert parse_state((store.root / STATE_FILE).read_text())["seen_at"] == "t0"


def test_compare_is_pure():
    assert compare(None, "a") is None
    assert compare({"sha256": "a"}, "a") is None
    assert compare({"sha256": "a"}, "b").current == "b"
