"""The artifact store: ids, the state machine, validation, URIs, concurrent writers."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time

import pytest

from minarad.artifacts import (
    ArtifactNotCompleted, ArtifactNotFound, ArtifactStore, ArtifactTypeMismatch,
    InvalidTransition)
from minarad.artifacts.models import find_uris, is_artifact_id, new_id
from minarad.errors import InvalidInput
from tests.artifacts.conftest import BAR


def test_ids_carry_the_type_prefix_and_sort_in_creation_order(artifacts):
    made = [artifacts.create(t, who="agent") for t in ("chart", "spreadsheet", "report") * 20]
    assert [a.id[:2] for a in made[:3]] == ["x-", "x-", "r-"]
    assert all(is_artifact_id(a.id) for a in made)
    assert len({a.id for a in made}) == len(made)
    assert sorted(made, key=lambda a: a.id[2:]) == made
    assert new_id("chart", now_ms=1)[2:] < new_id("chart", now_ms=10**12)[2:]


def test_create_complete_records_data_and_every_transition(artifacts):
    chart = artifacts.create("chart", title="Sales", session="s1", who="agent-7")
    assert chart.state == "running" and chart.data is None and chart.uri.startswith("chart://x-")
    done = artifacts.complete(chart.id, {"charts": [BAR]}, who="agent-7")
    assert done.state == "completed" and done.data == {"charts": [BAR]}
    assert done.updated >= done.created
    trail = [(t.from_state, t.to_state, t.who) for t in artifacts.audit(chart.id)]
    assert trail == [(None, "running", "agent-7"), ("running", "completed", "agent-7")]


def test_fail_records_the_message(artifacts):
    report = artifacts.create("report", who="agent")
    failed = artifacts.fail(report.id, "the query timed out", who="job:x")
    assert failed.state == "error" and failed.error == "the query timed out"
    assert [t.to_state for t in artifacts.audit(report.id)] == ["running", "error"]


@pytest.mark.parametrize("first", ["complete", "fail"])
@pytest.mark.parametrize("second", ["complete", "fail"])
def test_an_ended_artifact_cannot_change_state_again(artifacts, first, second):
    sheet = artifacts.create("spreadsheet", who="a")
    ends = {"complete": lambda: artifacts.complete(sheet.id, {"csvContent": "a\n1"}, who="a"),
            "fail": lambda: artifacts.fail(sheet.id, "broke", who="a")}
    ended = ends[first]()
    with pytest.raises(InvalidTransition) as err:
        ends[second]()
    assert err.value.code == "invalid_transition"
    assert err.value.details["state"] == ended.state
    assert artifacts.get(sheet.id) == ended
    assert len(artifacts.audit(sheet.id)) == 2


@pytest.mark.parametrize("type_, data, reason", [
    ("chart", {"series": []}, '"charts"'),
    ("chart", {"charts": []}, "non-empty"),
    ("chart", {"charts": ["bar"]}, "chart 1 is not"),
    ("chart", [BAR], '"charts"'),
    ("spreadsheet", {"csv": "a,b"}, "csvContent"),
    ("spreadsheet", {"csvContent": 'a,"b\n1,2'}, "does not parse"),
    ("spreadsheet", {"csvContent": 'a,b\n1,"2"x'}, "does not parse at line 2"),
    ("spreadsheet", {"csvContent": ""}, "no rows"),
    ("spreadsheet", {"csvContent": "a", "title": 3}, '"title"'),
    ("report", {"content": "  "}, "empty"),
    ("report", 42, "Markdown or HTML"),
    ("report", {"content": "x", "format": "pdf"}, '"format"'),
])
def test_data_that_does_not_fit_the_type_is_refused_with_the_reason(artifacts, type_, data,
                                                                    reason):
    made = artifacts.create(type_, who="a")
    with pytest.raises(InvalidInput) as err:
        artifacts.complete(made.id, data, who="a")
    assert err.value.code == "invalid_artifact_data" and reason in err.value.message
    assert artifacts.get(made.id).state == "running"
    assert len(artifacts.audit(made.id)) == 1


def test_a_report_is_stored_with_its_format(artifacts):
    md = artifacts.create("report", who="a")
    html = artifacts.create("report", who="a")
    assert artifacts.complete(md.id, "# Title\n\ntext", who="a").data == {
        "content": "# Title\n\ntext", "format": "markdown"}
    assert artifacts.complete(html.id, "<h1>T</h1>", who="a").data["format"] == "html"


def test_resolve_returns_a_completed_artifact(artifacts):
    chart = artifacts.create("chart", who="a")
    artifacts.complete(chart.id, {"charts": [BAR]}, who="a")
    assert artifacts.resolve(f"chart://{chart.id}").data == {"charts": [BAR]}


def test_an_unknown_id_names_the_closest_ids_of_that_session(artifacts):
    mine = []
    for _ in range(3):  # a millisecond apart: ids of one millisecond differ only at the end
        mine.append(artifacts.create("chart", session="s1", who="a"))
        time.sleep(0.002)
    other = artifacts.create("chart", session="s2", who="a")
    typo = mine[1].id[:-6] + ("0" if mine[1].id[-6] != "0" else "1") + mine[1].id[-5:]
    with pytest.raises(ArtifactNotFound) as err:
        artifacts.resolve(f"chart://{typo}", session="s1")
    details = err.value.to_dict()
    assert details["error"] == "artifact_not_found" and err.value.http_status == 404
    assert details["id"] == typo and details["uri"] == f"chart://{typo}"
    closest = [c["id"] for c in details["closest"]]
    assert closest[0] == mine[1].id and set(closest) == {a.id for a in mine}
    assert other.id not in details["hint"] and mine[1].uri in details["hint"]


def test_a_scheme_that_is_not_the_stored_type_is_a_mismatch(artifacts):
    sheet = artifacts.create("spreadsheet", who="a")
    artifacts.complete(sheet.id, {"csvContent": "a\n1"}, who="a")
    with pytest.raises(ArtifactTypeMismatch) as err:
        artifacts.resolve(f"chart://{sheet.id}")
    assert err.value.code == "artifact_type_mismatch"
    assert err.value.details["actual"] == "spreadsheet" and err.value.details["hint"] == sheet.uri


def test_an_artifact_that_is_not_completed_says_its_state(artifacts):
    running = artifacts.create("chart", who="a")
    failed = artifacts.create("report", who="a")
    artifacts.fail(failed.id, "no data", who="a")
    with pytest.raises(ArtifactNotCompleted) as err:
        artifacts.resolve(running.uri)
    assert err.value.details["state"] == "running" and "running" in err.value.message
    with pytest.raises(ArtifactNotCompleted) as err:
        artifacts.resolve(failed.uri)
    assert err.value.details["state"] == "error" and "no data" in err.value.message


@pytest.mark.parametrize("uri", ["chart:/x-1", "pdf://x-1", "chart://", "x-1", "chart://../x"])
def test_a_malformed_uri_is_refused(artifacts, uri):
    with pytest.raises(InvalidInput) as err:
        artifacts.resolve(uri)
    assert err.value.code == "invalid_artifact_uri"


def test_uris_are_found_in_a_message_once_each_in_order():
    text = ("See chart://x-b and report://r-a.\n(spreadsheet://x-c), chart://x-b again; "
            "not a uri: chart:x-d, ftp://x-e")
    assert find_uris(text) == ["chart://x-b", "report://r-a", "spreadsheet://x-c"]


def test_list_filters_and_orders_newest_first(artifacts):
    a = artifacts.create("chart", session="s1", who="a")
    b = artifacts.create("report", session="s1", who="a")
    artifacts.create("chart", session="s2", who="a")
    artifacts.complete(b.id, "x", who="a")
    assert [x.id for x in artifacts.list_artifacts(session="s1")] == [b.id, a.id]
    assert [x.id for x in artifacts.list_artifacts(session="s1", state="running")] == [a.id]
    assert [x.id for x in artifacts.list_artifacts(type_="report")] == [b.id]


def test_the_database_is_in_wal_mode_with_both_tables(artifacts):
    artifacts.create("chart", who="a")
    db = sqlite3.connect(artifacts.path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"artifacts", "audit"} <= tables


_WORKER = """
import json, sys
from minarad.artifacts import ArtifactStore, InvalidTransition
store = ArtifactStore(sys.argv[1])
made, won = [], 0
for n in range(int(sys.argv[2])):
    a = store.create("spreadsheet", session=sys.argv[3], who=sys.argv[3])
    store.complete(a.id, {"csvContent": f"n\\n{n}"}, who=sys.argv[3])
    made.append(a.id)
for artifact_id in sys.argv[4:]:
    try:
        store.complete(artifact_id, {"csvContent": "w\\n" + sys.argv[3]}, who=sys.argv[3])
        won += 1
    except InvalidTransition:
        pass
print(json.dumps({"made": made, "won": won}))
"""


def test_concurrent_writer_processes_lose_nothing_and_never_both_end_one_artifact(artifacts):
    contested = [artifacts.create("spreadsheet", who="setup").id for _ in range(30)]
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(artifacts.path), "40",
                               f"w{n}", *contested], stdout=subprocess.PIPE, text=True)
             for n in range(4)]
    results = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    made = [i for r in results for i in r["made"]]
    assert len(set(made)) == 160
    assert sum(r["won"] for r in results) == len(contested)  # each one won exactly once
    for artifact_id in contested:
        done = artifacts.get(artifact_id)
        trail = artifacts.audit(artifact_id)
        assert done.state == "completed" and [t.to_state for t in trail] == [
            "running", "completed"]
        assert done.data["csvContent"] == "w\n" + trail[1].who
    assert len(artifacts.list_artifacts(state="completed", limit=1000)) == 190


def test_one_store_shared_by_threads_keeps_every_write(artifacts):
    import concurrent.futures

    def work(n):
        made = artifacts.create("report", session=f"t{n % 4}", who=f"thread-{n}")
        return artifacts.complete(made.id, f"# {n}", who=f"thread-{n}").id

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(work, range(200)))
    assert len(set(ids)) == 200
    assert len(artifacts.list_artifacts(state="completed", limit=1000)) == 200
    assert all(len(artifacts.audit(i)) == 2 for i in ids[:20])
