"""``minara token`` and ``minara ui``: the gateway's credentials.

No web framework is imported: both only read or write files in the state
folder (see :mod:`minarad.gateway.security`).
"""

from __future__ import annotations

import click

from minarad.cli.options import CliContext, emit, json_option, pass_ctx


@click.command("token")
@click.option("--rotate", is_flag=True,
              help="Make a new token; the old one and every browser session stop working.")
@json_option
@pass_ctx
def token(ctx: CliContext, rotate: bool) -> None:
    """Print the HTTP gateway's bearer token (made on first use), or rotate it.

    API clients send it as 'Authorization: Bearer TOKEN'. It is kept in
    the state folder, readable by you alone (mode 0600).

    Example: curl -H "Authorization: Bearer $(minara token)" http://127.0.0.1:7411/v1/status
    """
    from minarad.gateway import security

    state_dir = ctx.settings.state_dir
    value = security.rotate_token(state_dir) if rotate else \
        security.read_or_create_token(state_dir)
    emit(ctx, {"token": value, "path": str(security.token_path(state_dir)),
               "rotated": bool(rotate)}, value)


@click.command("ui")
@click.option("--open", "open_browser", is_flag=True, help="Open the link in a browser too.")
@json_option
@pass_ctx
def ui(ctx: CliContext, open_browser: bool) -> None:
    """Print the web UI's address with a login link that works once (for 10 minutes).

    The link gives the browser a session cookie; minarad must be running
    with the gateway on (MINARA_HTTP, default 127.0.0.1:7411).

    Example: minara ui --open
    """
    from minarad.gateway import security
    from minarad.gateway.serve import parse_listen, running_address, url_for

    settings = ctx.settings
    url = running_address(settings)
    if url is None:
        listen = parse_listen(settings.http)
        if listen is None:
            from minarad.errors import MinaraError

            raise MinaraError("the gateway is off (MINARA_HTTP=off); set MINARA_HTTP to "
                              "host:port and restart minarad", code="gateway_off")
        url = url_for(*listen)
    login = f"{url}/login?code={security.new_login_code(settings.state_dir)}"
    if open_browser:
        import webbrowser

        webbrowser.open(login)
    emit(ctx, {"url": url, "login_url": login,
               "expires_in_seconds": security.LOGIN_TTL_SECONDS}, login)
