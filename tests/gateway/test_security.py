"""The gateway's secrets and checks as functions: tokens, login codes, sessions, hosts."""

from __future__ import annotations

import stat

import pytest

from minarad.errors import InvalidInput
from minarad.gateway import security
from minarad.gateway.guard import allowed_hosts, host_name
from minarad.gateway.render import render_markdown
from minarad.gateway.serve import parse_listen


def test_token_is_made_once_private_and_rotates(tmp_path):
    first = security.read_or_create_token(tmp_path)
    assert security.read_or_create_token(tmp_path) == first
    path = security.token_path(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    tokens = security.TokenSource(tmp_path)
    second = security.rotate_token(tmp_path)
    assert second != first and tokens.current() == second


def test_login_code_works_once_and_expires(tmp_path):
    code = security.new_login_code(tmp_path)
    assert security.redeem_login_code(tmp_path, code)
    assert not security.redeem_login_code(tmp_path, code)
    old = security.new_login_code(tmp_path, ttl=-1)
    assert not security.redeem_login_code(tmp_path, old)
    assert not security.redeem_login_code(tmp_path, "made-up")
    assert list((tmp_path / "gateway" / "logins").iterdir()) == []  # only hashes, all spent


def test_session_cookie_is_signed_with_the_token():
    cookie = security.new_session("token-a")
    nonce = security.session_nonce("token-a", cookie)
    assert nonce
    assert security.session_nonce("token-b", cookie) is None  # a rotated token ends it
    expiry, n, mac = cookie.split(".")
    assert security.session_nonce("token-a", f"{int(expiry) + 999}.{n}.{mac}") is None
    assert security.session_nonce("token-a", security.new_session("token-a", -5)) is None
    assert security.csrf_token("token-a", nonce) != security.csrf_token("token-b", nonce)


@pytest.mark.parametrize("header, name", [("127.0.0.1:7411", "127.0.0.1"),
                                          ("LOCALHOST", "localhost"), ("[::1]:80", "::1"),
                                          ("", None), ("evil.example", "evil.example")])
def test_host_names(header, name):
    assert host_name(header) == name


def test_allowed_hosts_are_loopback_the_bound_address_and_extras():
    hosts = allowed_hosts("0.0.0.0", "memory.lan, Proxy.example")
    assert {"127.0.0.1", "localhost", "::1", "memory.lan", "proxy.example"} <= hosts
    assert "0.0.0.0" not in hosts


@pytest.mark.parametrize("value, expected", [("127.0.0.1:7411", ("127.0.0.1", 7411)),
                                             ("[::1]:0", ("::1", 0)), ("off", None),
                                             ("OFF", None)])
def test_parse_listen(value, expected):
    assert parse_listen(value) == expected


@pytest.mark.parametrize("value", ["7411", "localhost", "host:port", ":80", "a:99999"])
def test_parse_listen_refuses_nonsense(value):
    with pytest.raises(InvalidInput):
        parse_listen(value)


def test_markdown_is_rendered_and_nothing_active_survives():
    html = render_markdown("# T\n\n<b onclick=x>b</b> [a](javascript:alert(1)) "
                           "[ok](https://example.org) [[a/b]] [[Notes.md|notes]]\n")
    assert "<h1>T</h1>" in html and "<b" not in html and "onclick=" not in html.split("&lt;")[0]
    assert 'href="javascript:' not in html
    assert 'href="https://example.org"' in html and 'rel="noopener noreferrer nofollow"' in html
    assert 'href="/workspace?path=wiki/a/b.md"' in html
    assert 'href="/workspace?path=Notes.md" rel="noopener noreferrer nofollow">notes</a>' in html
