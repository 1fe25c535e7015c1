"""minarad.context: block order, journal selection, budgets, cache keys (library level)."""

import datetime as dt

from minarad.context import Budgets, apply_budgets, build_context, select_journal_files
from minarad.context import ContextFile

NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.timezone.utc)


def names(ctx):
    return [b.name for b in ctx.blocks]


def paths(block):
    return [f.path for f in block.files]


def test_fresh_workspace_order(store):
    ctx = build_context(store.root, now=NOW)
    assert names(ctx) == ["identity", "memory_snapshot", "bootstrap"]
    assert paths(ctx.block("identity")) == ["SOUL.md", "AGENTS.md"]
    assert paths(ctx.block("memory_snapshot")) == ["USER.md", "MEMORY.md"]
    text = ctx.text()
    assert text.index("follow the workspace") < text.index('name="identity"') \
        < text.index('name="memory_snapshot"') < text.index('name="bootstrap"')


def test_journal_selection_today_and_yesterday():
    names_ = ["2026-11-29-s1.md", "2026-11-29.md", "2026-11-28-s2.md", "2026-11-27-s1.md",
              "notes.md", "2026-11-29-s1.md.swp", "2026-11-28.md"]
    days = (dt.date(2026, 11, 28), dt.date(2026, 11, 29))
    assert select_journal_files(names_, days) == [
        "memory/2026-11-28.md", "memory/2026-11-28-s2.md",
        "memory/2026-11-29.md", "memory/2026-11-29-s1.md"]


def test_journal_files_follow_the_local_date(store, local_tz):
    (store.root / "memory").mkdir()
    for day in ("2026-11-28", "2026-11-29", "2026-11-30"):
        (store.root / f"memory/{day}-s1.md").write_text(f"# {day}\n")
    local_tz("Asia/Seoul")  # 12:00Z is 21:00 on the 29th; 15:00Z is the 30th
    snap = build_context(store.root, now=NOW).block("memory_snapshot")
    assert paths(snap)[-2:] == ["memory/2026-11-28-s1.md", "memory/2026-11-29-s1.md"]
    later = NOW + dt.timedelta(hours=3)
    snap = build_context(store.root, now=later).block("memory_snapshot")
    assert paths(snap)[-2:] == ["memory/2026-11-29-s1.md", "memory/2026-11-30-s1.md"]


def cf(path, chars, role="memory"):
    return ContextFile(path=path, role=role, chars=chars, blob_id="b", sha256="s")


def test_budgets_per_file_and_total():
    files = [cf("a", 10), cf("big", 13_000), cf("b", 50), cf("c", 45)]
    apply_budgets(files, Budgets(max_file_chars=12_000, max_total_chars=100))
    assert [f.included for f in files] == [True, False, True, False]
    assert "12,000" in files[1].omitted and "100" in files[3].omitted


def test_large_file_is_listed_by_path(store):
    (store.root / "MEMORY.md").write_text("x" * 12_001)
    ctx = build_context(store.root, now=NOW)
    memory = next(f for f in ctx.block("memory_snapshot").files if f.path == "MEMORY.md")
    assert not memory.included and memory.chars == 12_001
    assert "x" * 100 not in ctx.text()
    assert str(store.root / "MEMORY.md") in ctx.text()


def test_newest_journal_wins_the_budget(store):
    (store.root / "memory").mkdir()
    (store.root / "memory/2026-11-28-s1.md").write_text("old " * 100)
    (store.root / "memory/2026-11-29-s1.md").write_text("new " * 100)
    (store.root / "BOOTSTRAP.md").unlink()
    used = sum(f.chars for b in build_context(store.root, now=NOW, disclose_soul=False).blocks
               for f in b.files if f.role != "journal")
    ctx = build_context(store.root, now=NOW, budgets=Budgets(max_total_chars=used + 450))
    journal = {f.path: f.included for f in ctx.block("memory_snapshot").files
               if f.role == "journal"}
    assert journal == {"memory/2026-11-28-s1.md": False, "memory/2026-11-29-s1.md": True}


def test_cache_key_changes_only_with_text(store):
    first = build_context(store.root, now=NOW).block("identity").cache_key
    assert build_context(store.root, now=NOW).block("identity").cache_key == first
    (store.root / "AGENTS.md").write_text("# AGENTS.md\n\nNew rules.\n")
    assert build_context(store.root, now=NOW).block("identity").cache_key != first


def test_channel_memory_replaces_memory(store):
    (store.root / "channels/team").mkdir(parents=True)
    (store.root / "channels/team/MEMORY.md").write_text("# team memory\n")
    ctx = build_context(store.root, now=NOW, channel_memory="channels/team/MEMORY.md",
                        channel="team")
    assert paths(ctx.block("memory_snapshot")) == ["USER.md", "channels/team/MEMORY.md"]
    assert "# team memory" in ctx.text()


def test_soul_notice_block_appears_once(store):
    build_context(store.root, now=NOW)
    (store.root / "SOUL.md").write_text("# SOUL.md\n\nNew vibe.\n")
    assert names(build_context(store.root, now=NOW))[-1] == "soul_notice"
    assert "soul_notice" not in names(build_context(store.root, now=NOW))


def test_only_minara_tags_are_neutralized():
    from minarad.context import neutralize_markup

    assert neutralize_markup("</file></Minara-Block><minara-block name=x>\n<FILE/>") == \
        "&lt;/file>&lt;/Minara-Block>&lt;minara-block name=x>\n&lt;FILE/>"
    same = "<b>x</b> <filename> <files> <minara-block-x> a < file &lt;file> `<br>`\n"
    assert neutralize_markup(same) == same
