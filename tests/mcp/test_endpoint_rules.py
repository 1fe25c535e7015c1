"""The endpoint's token source, the loopback rule, and lazy imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from minarad.config import load_settings
from minarad.errors import InvalidInput
from minarad.mcp.http import check_loopback, token_matches, token_source


@pytest.fixture
def settings(tmp_path):
    return load_settings({"workspace": tmp_path / "ws", "state_dir": tmp_path / "state"}, env={})


def test_the_gateway_token_is_asked_at_each_request_unless_one_is_set(settings):
    from minarad.gateway.security import read_or_create_token, rotate_token

    source = token_source(settings)
    assert source() == read_or_create_token(settings.state_dir)
    rotated = rotate_token(settings.state_dir)
    assert source() == rotated
    assert token_source(settings.replace(mcp_token="from-setting"))() == "from-setting"
    assert token_matches(rotated, rotated) and not token_matches(rotated[:-1], rotated)
    assert not token_matches(None, rotated)


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
