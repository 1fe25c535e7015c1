"""``minarad``'s entry point: a library error is one log line, with its traceback on request."""

from __future__ import annotations

import subprocess

import pytest

from tests.daemon.conftest import MINARAD


@pytest.mark.parametrize("ask", [None, "--debug", "MINARA_DEBUG"])
def test_an_error_shows_its_traceback_only_when_asked(env, tmp_path, ask):
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("x\n")
    args = [MINARAD, "--workspace", str(not_a_folder)] + (["--debug"] if ask == "--debug" else [])
    extra = {"MINARA_DEBUG": "1"} if ask == "MINARA_DEBUG" else {}
    proc = subprocess.run(args, env={**env, **extra}, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1
    assert f"minarad: workspace {not_a_folder} is not a folder" in proc.stderr
    assert ("Traceback" in proc.stderr) is (ask is not None)
