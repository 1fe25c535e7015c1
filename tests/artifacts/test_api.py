"""The framework-free functions an HTTP layer serves artifacts and uploads with."""

from __future__ import annotations

import os

import pytest

from minarad.app import Minara
from minarad.artifacts import api as artifacts_api
from minarad.config import load_settings
from minarad.errors import Forbidden, InvalidInput, NotFound
from minarad.files import api as files_api
from tests.artifacts.conftest import BAR


@pytest.fixture
def app(tmp_path):
    env = {"MINARA_CONFIG": str(tmp_path / "none.toml"), "HOME": str(tmp_path),
           "MINARA_DATA_DIR": str(tmp_path / "data"), "MINARA_CHROMIUM": "off",
           "MINARA_WORKSPACE_DIR": str(tmp_path / "ws")}
    (tmp_path / "none.toml").touch()
    with Minara.open(load_settings({}, env=env)) as opened:
        yield opened


def test_materialized_files_are_served_with_safe_headers(app):
    made = app.artifacts.create("chart", who="a")
    app.artifacts.complete(made.id, {"charts": [BAR]}, who="a")
    result = artifacts_api.materialize_message(app, f"see {made.uri}")
    assert result["artifacts"][0]["skipped"]  # chromium is off
    body, headers = artifacts_api.artifact_file(app, made.id, "index.html")
    assert body.startswith(b"<!doctype html>")
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    body, headers = artifacts_api.artifact_file(app, made.id, "artifact.json")
    assert headers["Content-Type"] == "application/json" and headers["Content-Length"] == str(
        len(body))
    with pytest.raises(NotFound):
        artifacts_api.artifact_file(app, made.id, "chart-1.png")


@pytest.mark.parametrize("name", ["../artifacts.sqlite3", ".png-source", "x.html", "index.htm"])
def test_only_the_materializers_files_can_be_asked_for(app, name):
    made = app.artifacts.create("chart", who="a")
    with pytest.raises(Forbidden):
        artifacts_api.artifact_file(app, made.id, name)


def test_a_malformed_artifact_id_is_refused_before_the_disk(app):
    with pytest.raises(InvalidInput):
        artifacts_api.artifact_file(app, "../../etc", "index.html")
    with pytest.raises(InvalidInput):
        artifacts_api.get_artifact(app, "x-../x")


def test_a_symlinked_artifact_folder_is_not_served(app, tmp_path):
    made = app.artifacts.create("chart", who="a")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "index.html").write_text("not ours")
    app.artifacts_dir.mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere", app.artifacts_dir / made.id)
    with pytest.raises((Forbidden, NotFound)):
        artifacts_api.artifact_file(app, made.id, "index.html")


def test_get_and_list_and_resolve(app):
    made = app.artifacts.create("report", session="s1", who="a")
    app.artifacts.complete(made.id, "# R", who="b")
    got = artifacts_api.get_artifact(app, made.id)
    assert [t["who"] for t in got["audit"]] == ["a", "b"]
    assert artifacts_api.list_artifacts(app, session="s1")["artifacts"][0]["id"] == made.id
    assert "data" not in artifacts_api.list_artifacts(app)["artifacts"][0]
    assert artifacts_api.resolve_uri(app, made.uri)["data"]["content"] == "# R"


def test_uploads_download_as_attachments_never_rendered(app):
    stored = files_api.upload(app, "u1", b"<script>alert(1)</script>", "page.html")
    stream, headers = files_api.download(app, stored["key"])
    with stream:
        assert stream.read() == b"<script>alert(1)</script>"
    assert headers["Content-Type"] == "application/octet-stream"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Content-Disposition"].startswith("attachment;")
    assert headers["Content-Length"] == "25"
    assert files_api.list_files(app)["files"][0]["key"] == stored["key"]
    assert files_api.delete(app, stored["key"], who="ops")["by"] == "ops"
    assert app.files.deletions()[0]["who"] == "ops"


def test_the_stores_live_in_the_data_folder_with_the_default_limit(app, tmp_path):
    assert app.files.max_bytes == 20 * 1024 * 1024
    assert app.files.root == tmp_path / "data" / "uploads"
    assert app.artifacts.path == tmp_path / "data" / "artifacts.sqlite3"
    assert not str(app.artifacts_dir).startswith(str(app.root))
