"""Serving from minarad: off means off, and a taken port never stops the commits."""

from __future__ import annotations

import json
import socket
import subprocess

from tests.conftest import git
from tests.gateway.conftest import MINARAD, Gateway, wait_for


def test_a_taken_port_is_one_log_line_and_the_daemon_still_commits(tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    gw = Gateway(tmp_path, {"MINARA_HTTP": f"127.0.0.1:{port}"})
    try:
        with open(gw.log_path, "ab") as log:
            gw.proc = subprocess.Popen([MINARAD], env=gw.env, stdout=log,
                                       stderr=subprocess.STDOUT)
        wait_for(lambda: "ready:" in gw.log(), "minarad ready")
        assert "start_gateway did not start" in gw.log() and "Address already in use" in gw.log()
        (gw.ws / "notes.md").write_text("- still committed\n")
        wait_for(lambda: "notes.md" in git(gw.ws, "log", "-1", "--name-only", "--format="),
                 "the editor save committed")
    finally:
        gw.stop()
        taken.close()


def test_off_serves_nothing_and_ui_says_so(tmp_path):
    gw = Gateway(tmp_path, {"MINARA_HTTP": "off"})
    proc = gw.cli("--json", "ui")
    assert proc.returncode == 1
    assert json.loads(proc.stderr)["error"] == "gateway_off"
    token = gw.cli("token", check=0).stdout.strip()
    assert len(token) >= 40 and gw.cli("token", check=0).stdout.strip() == token
