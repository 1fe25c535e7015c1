"""SkippedPaths: what the daemon cannot version, told once."""

from minarad.daemon.skips import SkippedPaths, split_entry

BIG = "huge.md: larger than 5,242,880 bytes"
LINK = "l.md: l.md: l.md is a symlink to outside the workspace; minara does not follow links"


def test_each_path_and_reason_is_new_once():
    skipped = SkippedPaths()
    assert skipped.update(None, [BIG, LINK]) == [BIG, LINK[len("l.md: "):]]
    assert skipped.update(["huge.md"], [BIG]) == []  # the same skip, seen again
    assert skipped.update(None, [BIG, LINK]) == []  # and again by a whole-tree scan
    assert skipped.update(["huge.md"], ["huge.md: Permission denied"]) == [
        "huge.md: Permission denied"]  # a new reason is told
    assert skipped.update(["huge.md", "other.md"], []) == []  # committed or gone: dropped
    assert skipped.entries() == [LINK[len("l.md: "):]]
    assert skipped.update(["huge.md"], [BIG]) == [BIG]  # back again: told again
    assert skipped.update(None, []) == [] and len(skipped) == 0


def test_split_entry_prefers_the_scanned_path():
    assert split_entry("a: b.md: larger than 1 bytes", ["a: b.md"]) == (
        "a: b.md", "larger than 1 bytes")
    assert split_entry(BIG) == ("huge.md", "larger than 5,242,880 bytes")
    assert split_entry(LINK)[1].startswith("l.md is a symlink")


