"""The bearer token kept in the state folder, the loopback rule, and lazy imports."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from minarad.config import load_settings
from minarad.errors import Forbidden, InvalidInput
from minarad.mcp.http import check_loopback
from minarad.mcp.token import bearer_token, token_matches, token_path


@pytest.fixture
def settings(tmp_path):
    return load_settings({"workspace": tmp_path / "ws", "state_dir": tmp_path / "state"}, env={})


def test_a_token_is_made_once_private_and_reused(settings):
    first = bearer_token(settings, "mcp")
    path = token_path(settings.state_dir, "mcp")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert len(first) >= 40 and bearer_token(settings, "mcp") == first
    assert bearer_token(settings, "mcp", configured="from-setting") == "from-setting"
    assert token_matches(first, first) and not token_matches(first[:-1], first)
    assert not token_matches(None, first)


def test_a_token_file_others_can_read_is_refused(settings):
    bearer_token(settings, "mcp")
    path = token_path(settings.state_dir, "mcp")
    os.chmod(path, 0o644)
    with pytest.raises(Forbidden) as err:
        bearer_token(settings, "mcp")
    assert err.value.code == "token_file_exposed" and "chmod 600" in err.value.message


def test_an_empty_token_file_gets_a_new_token(settings):
    path = token_path(settings.state_dir, "mcp")
    path.parent.mkdir(parents=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.close(fd)
    token = bearer_token(settings, "mcp")
    assert token and path.read_text().strip() == token


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_hosts_are_accepted(host):
    assert check_loopback(host) == host


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "example.org"])
def test_other_hosts_are_refused(host):
    with pytest.raises(InvalidInput, match="loopback only"):
        check_loopback(host)


PROBE = """
import json, sys
from minarad.cli import main
code = main(sys.argv[1:])
heavy = ("mcp", "pydantic", "uvicorn", "starlette", "anyio", "minarad.mcp")
loaded = [m for m in sys.modules if m.startswith(heavy)]
print(json.dumps(sorted(loaded)), file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.parametrize("args", [["memory", "history", "MEMORY.md"], ["--help"],
                                  ["mcp", "--help"]])
def test_other_commands_do_not_load_the_mcp_stack(env, args):
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True,
                          text=True, check=True)
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []
