"""``minara artifact`` and ``minara files`` through the real console script."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from openpyxl import Workbook

from tests.conftest import MINARA

CHART = {"charts": [{"xAxis": {"type": "category", "data": ["a", "b"]},
                     "yAxis": {"type": "value"}, "series": [{"type": "line", "data": [1, 2]}]}]}


@pytest.fixture
def data_env(env, tmp_path):
    env["MINARA_DATA_DIR"] = str(tmp_path / "data")
    env["MINARA_CHROMIUM"] = "off"
    return env


def test_the_life_of_an_artifact(minara, data_env, tmp_path):
    made = minara.json("artifact", "create", "chart", "--title", "Trend", "--session", "s1")
    assert made["state"] == "running" and made["uri"] == f"chart://{made['id']}"
    done = minara.json("--as", "agent-7", "artifact", "complete", made["id"], json.dumps(CHART))
    assert done["state"] == "completed"
    shown = minara.json("artifact", "get", made["id"])
    assert shown["data"] == CHART
    assert [(t["to_state"], t["who"]) for t in shown["audit"]] == [
        ("running", "tester"), ("completed", "agent-7")]
    again = minara("--json", "artifact", "fail", made["id"], "too late", check=1)
    assert json.loads(again.stderr)["error"] == "invalid_transition"
    listed = minara.json("artifact", "list", "--session", "s1")
    assert [a["id"] for a in listed["artifacts"]] == [made["id"]]
    assert minara.json("artifact", "resolve", made["uri"])["data"] == CHART
    assert (tmp_path / "data" / "artifacts.sqlite3").is_file()


def test_a_report_completes_from_stdin_and_bad_data_is_refused(minara, data_env):
    report = minara.json("artifact", "create", "report")
    minara("artifact", "complete", report["id"], input="# Weekly\n\nAll good.\n", check=0)
    assert minara.json("artifact", "get", report["id"])["data"]["format"] == "markdown"
    chart = minara.json("artifact", "create", "chart")
    bad = minara("--json", "artifact", "complete", chart["id"], '{"series": []}', check=1)
    assert json.loads(bad.stderr)["error"] == "invalid_artifact_data"
    text = minara("artifact", "complete", chart["id"], "not json", check=1)
    assert "not JSON" in text.stderr


def test_resolve_errors_are_structured_for_an_agent(minara, data_env):
    made = minara.json("artifact", "create", "spreadsheet", "--session", "s9")
    unknown = minara("--json", "artifact", "resolve", "spreadsheet://x-0000", "--session", "s9",
                     check=4)
    err = json.loads(unknown.stderr)
    assert err["error"] == "artifact_not_found" and err["closest"][0]["id"] == made["id"]
    assert made["uri"] in err["hint"]
    running = minara("--json", "artifact", "resolve", made["uri"], check=1)
    assert json.loads(running.stderr)["state"] == "running"
    wrong = minara("artifact", "resolve", f"report://{made['id']}", check=1)
    assert "is a spreadsheet, not a report" in wrong.stderr


def test_materialize_reads_a_message_and_warns_about_skipped_pngs(minara, data_env, tmp_path):
    chart = minara.json("artifact", "create", "chart")
    minara("artifact", "complete", chart["id"], json.dumps(CHART), check=0)
    message = tmp_path / "reply.md"
    message.write_text(f"Here is the trend: {chart['uri']}\n")
    out = minara.json("artifact", "materialize", "--message", message)
    [outcome] = out["artifacts"]
    assert outcome["folder"] == str(tmp_path / "data" / "artifacts" / chart["id"])
    assert sorted(outcome["written"]) == ["artifact.json", "index.html"]
    plain = minara("artifact", "materialize", input=chart["uri"], check=0)
    assert "unchanged 2" in plain.stdout and "chart_png_skipped" in plain.stderr
    broken = minara("artifact", "materialize", input="see chart://x-nope", check=1)
    assert "artifact_not_found" in broken.stdout


def test_files_put_ls_get_parse_rm(minara, data_env, tmp_path):
    book = Workbook()
    book.active.title = "Q1"
    for row in (["item", "qty"], ["bolt", 3]):
        book.active.append(row)
    path = tmp_path / "stock.xlsx"
    book.save(path)
    stored = minara.json("files", "put", path, "--user", "u1")
    key = stored["key"]
    assert key.startswith("chat/files/u1/") and key.endswith(".xlsx")
    assert minara.json("files", "ls")["files"][0]["key"] == key
    copy = tmp_path / "copy.xlsx"
    minara("files", "get", key, "-o", copy, check=0)
    assert copy.read_bytes() == path.read_bytes()
    parsed = minara("files", "parse", key, check=0)
    assert "## Q1" in parsed.stdout and "| bolt | 3 |" in parsed.stdout
    minara("--as", "alice", "files", "rm", key, check=0)
    assert minara.json("files", "ls")["files"] == []
    log = (tmp_path / "data" / "uploads-deleted.jsonl").read_text()
    assert json.loads(log)["who"] == "alice"
    gone = minara("--json", "files", "get", key, check=4)
    assert json.loads(gone.stderr)["error"] == "file_not_found"


def test_files_refuse_traversal_and_oversized_uploads(minara, data_env, tmp_path):
    escape = minara("--json", "files", "get", "chat/files/u1/../../../etc/passwd", check=5)
    assert json.loads(escape.stderr)["error"] == "key_outside_store"
    malformed = minara("--json", "files", "get", "chat/files/u1/x.txt", check=1)
    assert json.loads(malformed.stderr)["error"] == "invalid_key"
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 101)
    refused = minara("--json", "files", "put", big, extra_env={"MINARA_FILES_MAX_BYTES": "100"},
                     check=1)
    assert json.loads(refused.stderr)["error"] == "file_too_large"
    assert minara.json("files", "ls")["files"] == []
    ok = minara.json("files", "put", "-", "--name", "n.txt", input="hello")
    assert ok["size"] == 5 and ok["key"].endswith(".txt")


def test_files_keep_the_original_name(minara, data_env, tmp_path):
    source = tmp_path / "in" / "ünï.ÇSV"
    source.parent.mkdir()
    source.write_bytes("a,b\nü,2\n".encode())
    stored = minara.json("files", "put", source, "--user", "u1")
    assert stored["name"] == "ünï.ÇSV" and stored["key"].endswith(".csv")
    assert minara.json("files", "ls")["files"][0]["name"] == "ünï.ÇSV"
    assert minara("files", "ls", check=0).stdout.split("\t")[2].strip() == "ünï.ÇSV"
    out = tmp_path / "out"
    out.mkdir()
    wrote = minara("files", "get", stored["key"], "-o", out, check=0)
    assert wrote.stdout.strip() == str(out / "ünï.ÇSV")
    assert (out / "ünï.ÇSV").read_bytes() == source.read_bytes()
    again = minara("--json", "files", "get", stored["key"], "-o", out, check=1)
    assert json.loads(again.stderr)["error"] == "output_exists"  # never replaced
    assert (out / "ünï.ÇSV").read_bytes() == source.read_bytes()
    here = subprocess.run([MINARA, "files", "get", stored["key"], "-O"], cwd=tmp_path,
                          env=minara.env, capture_output=True, text=True, timeout=120)
    assert here.returncode == 0 and here.stdout.strip() == "./ünï.ÇSV", here.stderr
    assert (tmp_path / "ünï.ÇSV").read_bytes() == source.read_bytes()
    piped = minara.json("files", "put", "-", "--name", "../x/Zürich.txt", input="hi")
    assert piped["name"] == "Zürich.txt"
    bad = minara("--json", "files", "put", "-", "--name", "a\nb.txt", input="x", check=1)
    assert json.loads(bad.stderr)["error"] == "invalid_filename"


def test_files_parse_a_local_csv_and_a_malformed_one(minara, data_env, tmp_path):
    good = tmp_path / "a.tsv"
    good.write_text("x\ty\n1\t2\n")
    assert "| 1 | 2 |" in minara("files", "parse", "--file", good, check=0).stdout
    bad = tmp_path / "b.csv"
    bad.write_text('a,"b\n1,2')
    out = minara("--json", "files", "parse", "--file", bad, check=1)
    assert json.loads(out.stderr)["error"] == "malformed_sheet"
