"""The materializer: viewers that open in a real Chromium, PNGs, CSV, idempotence."""

from __future__ import annotations

import json
import os
import struct

import pytest

from minarad.artifacts.chromium import Browser
from minarad.artifacts.materialize import materialize
from tests.artifacts.conftest import BAR, PIE

CSV = 'name,amount,note\nalpha,1,"with, comma"\nbeta,2,"two\nlines"\n'


class Log:
    """Collects warnings the way loguru's ``logger.warning(fmt, *args)`` is called."""

    def __init__(self):
        self.lines = []

    def warning(self, fmt, *args):
        self.lines.append(fmt.format(*args))


def _completed(store, type_, data, **kw):
    made = store.create(type_, who="agent", **kw)
    return store.complete(made.id, data, who="agent")


@pytest.fixture
def three(artifacts):
    return (_completed(artifacts, "chart", {"charts": [BAR, PIE]}, title="Sales"),
            _completed(artifacts, "spreadsheet", {"csvContent": CSV, "title": "T"}),
            _completed(artifacts, "report", "# Findings\n\n<script>alert(1)</script>\n\n"
                       "Some **bold** text <img src=x onerror=\"alert(2)\">\n\n"
                       "[link](javascript:alert(3))"))


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_every_uri_gets_its_files_and_the_viewers_open_without_errors(
        artifacts, three, tmp_path, chromium):
    chart, sheet, report = three
    out = tmp_path / "data" / "artifacts"
    message = f"Here: {chart.uri}, the table {sheet.uri} and {report.uri}."
    log = Log()
    outcomes = materialize(artifacts, message, out, chromium=chromium, log=log)
    assert [o.uri for o in outcomes] == [chart.uri, sheet.uri, report.uri]
    assert all(o.error is None and not o.skipped for o in outcomes) and log.lines == []
    assert sorted(os.listdir(out / chart.id)) == [
        ".png-source", "artifact.json", "chart-1.png", "chart-2.png", "index.html"]
    assert _png_size(out / chart.id / "chart-1.png") == (1600, 1000)  # 2x of 800x500
    assert _png_size(out / chart.id / "chart-2.png") == (1600, 1000)
    assert (out / sheet.id / "data.csv").read_bytes() == CSV.encode()
    raw = json.loads((out / chart.id / "artifact.json").read_text())
    assert raw["data"] == {"charts": [BAR, PIE]} and raw["uri"] == chart.uri
    with Browser(chromium) as browser:
        for artifact in three:
            page = browser.open_page(out / artifact.id / "index.html")
            assert page.errors == [] and page.state == "ready", artifact.type


def test_the_chart_viewer_is_self_contained(artifacts, three, tmp_path):
    chart = three[0]
    materialize(artifacts, chart.uri, tmp_path / "out", chromium=None, log=Log())
    page = (tmp_path / "out" / chart.id / "index.html").read_text()
    assert "echarts" in page and "<script src" not in page and "http://" not in page.split(
        "<script>", 1)[0]
    assert "default-src 'none'" in page


def test_a_report_is_rendered_and_sanitised(artifacts, three, tmp_path):
    report = three[2]
    materialize(artifacts, report.uri, tmp_path / "out", chromium=None, log=Log())
    page = (tmp_path / "out" / report.id / "index.html").read_text()
    assert "<h1>Findings</h1>" in page and "<strong>bold</strong>" in page
    assert "<script" not in page and "onerror" not in page and 'href="javascript' not in page
    assert "<img>" in page  # the image stays, without a source to load


def test_a_spreadsheet_viewer_is_a_table_of_the_csv(artifacts, three, tmp_path):
    sheet = three[1]
    materialize(artifacts, sheet.uri, tmp_path / "out", chromium=None, log=Log())
    page = (tmp_path / "out" / sheet.id / "index.html").read_text()
    assert "<th>amount</th>" in page and "<td>with, comma</td>" in page


def test_without_chromium_the_pngs_are_skipped_and_the_rest_is_written(artifacts, three,
                                                                       tmp_path):
    chart = three[0]
    log = Log()
    [outcome] = materialize(artifacts, chart.uri, tmp_path / "out", chromium=None, log=log)
    assert sorted(outcome.written) == ["artifact.json", "index.html"]
    assert [s["file"] for s in outcome.skipped] == ["chart-1.png", "chart-2.png"]
    assert all("chart_png_skipped" in s["reason"] for s in outcome.skipped)
    assert log.lines and all(line.startswith("chart_png_skipped") for line in log.lines)
    assert not list((tmp_path / "out" / chart.id).glob("*.png"))


def test_rerunning_rewrites_nothing_when_the_data_did_not_change(artifacts, three, tmp_path,
                                                                 chromium):
    out = tmp_path / "out"
    message = " ".join(a.uri for a in three)
    materialize(artifacts, message, out, chromium=chromium, log=Log())
    before = {p: (p.stat().st_mtime_ns, p.stat().st_ino) for p in out.rglob("*")}
    again = materialize(artifacts, message, out, chromium=chromium, log=Log())
    assert all(o.written == [] for o in again)
    assert {p: (p.stat().st_mtime_ns, p.stat().st_ino) for p in out.rglob("*")} == before


def test_pngs_skipped_once_are_drawn_when_chromium_is_back(artifacts, three, tmp_path,
                                                           chromium):
    chart = three[0]
    materialize(artifacts, chart.uri, tmp_path / "out", chromium=None, log=Log())
    [outcome] = materialize(artifacts, chart.uri, tmp_path / "out", chromium=chromium, log=Log())
    assert outcome.written == ["chart-1.png", "chart-2.png"]
    assert sorted(outcome.unchanged) == ["artifact.json", "index.html"]


def test_unresolvable_uris_carry_their_error_and_do_not_stop_the_others(artifacts, three,
                                                                        tmp_path):
    chart, sheet, _ = three
    running = artifacts.create("chart", who="a")
    message = (f"{chart.uri} chart://x-nothere {running.uri} chart://{sheet.id} {sheet.uri}")
    outcomes = materialize(artifacts, message, tmp_path / "out", chromium=None, log=Log())
    errors = [o.error and o.error["error"] for o in outcomes]
    assert errors == [None, "artifact_not_found", "artifact_not_completed",
                      "artifact_type_mismatch", None]
    assert (tmp_path / "out" / sheet.id / "data.csv").is_file()
    assert not (tmp_path / "out" / running.id).exists()


def test_a_chart_that_fails_to_draw_is_skipped_with_the_reason_and_others_are_drawn(
        artifacts, tmp_path, chromium):
    good = _completed(artifacts, "chart", {"charts": [BAR]})
    broken = {"xAxis": {"type": "no-such-axis"}, "yAxis": {}, "series": [{"type": "bar",
                                                                        "data": [1]}]}
    bad = _completed(artifacts, "chart", {"charts": [BAR, broken]})
    log = Log()
    first, second = materialize(artifacts, f"{bad.uri} {good.uri}", tmp_path / "out",
                                chromium=chromium, log=log)
    assert "chart-1.png" in second.written and not second.skipped
    assert first.skipped and "chart-1.png" not in first.written
    assert "chart 2: Component xAxis.no-such-axis" in first.skipped[0]["reason"]
    assert any(line.startswith(f"chart_png_skipped {bad.id}") for line in log.lines)
    with Browser(chromium) as browser:  # the viewer still shows the chart that can be drawn
        page = browser.open_page(tmp_path / "out" / bad.id / "index.html", capture=".chart")
    assert page.state == "failed" and len(page.errors) == 1 and len(page.images) == 2


def test_a_symlinked_artifact_folder_is_refused(artifacts, three, tmp_path):
    chart = three[0]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / chart.id).symlink_to(elsewhere)
    [outcome] = materialize(artifacts, chart.uri, tmp_path / "out", chromium=None, log=Log())
    assert outcome.error["error"] == "symlink" and list(elsewhere.iterdir()) == []
