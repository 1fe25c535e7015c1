"""The debouncer is pure bookkeeping: driven here with plain numbers."""

from minarad.daemon.debounce import Debouncer


def test_a_path_is_due_after_the_quiet_window():
    d = Debouncer(quiet=0.3, cap=3.0)
    d.touch("a.md", 10.0)
    assert d.take_due(10.2) == {}
    assert d.take_due(10.3) == {"a.md": 10.0}
    assert len(d) == 0


def test_each_touch_restarts_the_window_until_the_cap():
    d = Debouncer(quiet=0.3, cap=1.0)
    for t in (0.0, 0.2, 0.4, 0.6, 0.8):
        d.touch("a.md", t)
        assert d.take_due(t) == {}
    assert d.next_deadline() == 1.0
    assert d.take_due(1.0) == {"a.md": 0.0}


def test_paths_settling_together_are_taken_together():
    d = Debouncer(quiet=0.3, cap=3.0)
    d.touch("old.md", 5.0)
    d.touch("new.md", 5.01)
    d.touch("later.md", 5.5)
    assert sorted(d.take_due(5.3)) == ["new.md", "old.md"]
    assert d.pending() == ["later.md"]


def test_nothing_is_taken_early_when_nothing_is_due():
    d = Debouncer(quiet=0.3, cap=3.0)
    d.touch("a.md", 0.0)
    assert d.take_due(0.29) == {}


def test_put_back_retries_no_sooner_than_asked_and_keeps_first_touch():
    d = Debouncer(quiet=0.3, cap=3.0)
    d.touch("a.md", 0.0)
    taken = d.take_due(0.3)
    d.put_back(taken, not_before=2.0)
    assert d.take_due(1.9) == {}
    assert d.take_due(2.0) == {"a.md": 0.0}


def test_take_all_drains():
    d = Debouncer(quiet=0.3, cap=3.0)
    d.touch("a.md", 0.0)
    d.touch("b.md", 0.1)
    assert d.take_all() == {"a.md": 0.0, "b.md": 0.1}
    assert d.next_deadline() is None
