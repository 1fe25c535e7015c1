"""Shared CLI plumbing: the context object, output helpers, shared flags."""

from __future__ import annotations

import os
import sys
from contextvars import ContextVar
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from minarad.app import Minara
    from minarad.config import Settings
    from minarad.store import Store

    F = TypeVar("F", bound=Callable[..., Any])


#: Set while the daemon runs a command for a client of its socket: called with
#: the command's flags, it returns the daemon's warm app for them (or refuses:
#: another workspace is run by the client itself).
APP_PROVIDER: ContextVar = ContextVar("minara_app_provider", default=None)


#: Commands that may create the workspace a ``--workspace DIR`` names (any other
#: command refuses a folder that is no workspace: a typo must not seed one).
CREATORS = frozenset({"init", "import"})


class RunHere(BaseException):
    """Raised in the daemon: this command is for the client to run itself.

    A BaseException, so that no error handler turns it into output.
    """


class CliContext:
    """What the root group resolved; commands reach the library through :attr:`app`.

    A plain class (not a dataclass): ``dataclasses`` is not imported on the
    way to ``minara memory get``.
    """

    __slots__ = ("flags", "as_json", "create_missing", "_app", "_borrowed")

    def __init__(self, flags: dict, as_json: bool = False, create_missing: bool = True):
        self.flags = flags
        self.as_json = as_json
        #: False when ``--workspace DIR`` names the folder: a typo must not seed a workspace.
        self.create_missing = create_missing
        self._app: Minara | None = None
        self._borrowed = False

    @property
    def app(self) -> Minara:
        """The :class:`minarad.app.Minara` of this run (settings loaded once)."""
        if self._app is None:
            provider = APP_PROVIDER.get()
            if provider is not None:
                self._app, self._borrowed = provider(self.flags), True
            else:
                from minarad.app import Minara

                self._app = Minara.open(**self.flags)
                self._app.create_missing = self.create_missing
        return self._app

    @property
    def settings(self) -> Settings:
        """The effective :class:`minarad.config.Settings`."""
        return self.app.settings

    @property
    def author(self) -> str:
        return self.settings.author

    def store(self) -> Store:
        """The workspace store, set up on first use (``ctx.app.store``)."""
        return self.app.store

    def path(self, file: str, channel: str | None = None) -> str:
        """The workspace path a FILE argument names (see :mod:`minarad.cli.paths`).

        With a channel, the writer (``--as``) must be a member when the
        channel has a ``MEMBERS.md`` (else Forbidden, ``access_denied``).
        """
        from minarad.cli.paths import workspace_path

        rel = workspace_path(self.app.root, file, channel)
        self.app.check_channel_access(channel, self.author)
        return rel

    def close(self) -> None:
        """Close the app if it was opened (the daemon's warm one stays open)."""
        if self._app is not None and not self._borrowed:
            self._app.close()


pass_ctx = click.make_pass_decorator(CliContext)


def emit(ctx: CliContext, data: object, text: str | None = None) -> None:
    """Print ``data`` as one JSON document with ``--json``, else ``text``."""
    if ctx.as_json:
        import json

        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    elif text is not None:
        click.echo(text)


def _set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    cli = ctx.find_object(CliContext)
    if value and cli is not None:
        cli.as_json = True
    return value


def _json_param() -> click.Option:
    return click.Option(["--json", "as_json"], is_flag=True, expose_value=False,
                        callback=_set_json, help="Print one JSON document.")


def json_option(f: F) -> F:
    """``--json`` on a subcommand, same as the global flag."""
    return click.option("--json", "as_json", is_flag=True, expose_value=False,
                        callback=_set_json, help="Print one JSON document.")(f)


def channel_option(f: F) -> F:
    """``--channel ID``: MEMORY.md means that conversation's memory."""
    return click.option("--channel", metavar="ID",
                        help="Use channels/ID/MEMORY.md for MEMORY.md.")(f)


def read_text_arg(value: str, max_bytes: int) -> str:
    """Resolve a TEXT argument: ``-`` is stdin, ``@path`` a file, ``@@...`` a literal ``@...``.

    The bytes are checked (size, UTF-8) by the store; here they are only read.

    Raises:
        click.UsageError: ``@path`` names a directory (a usage error, exit 2).
        NotFound: ``@path`` cannot be read (``input_not_found``).
    """
    from minarad.workspace.content import decode_text

    if value.startswith("@@"):
        return value[1:]
    if value == "-":
        data = sys.stdin.buffer.read(max_bytes + 1)
    elif value.startswith("@") and len(value) > 1:
        if os.path.isdir(value[1:]):
            raise click.UsageError(f"{value[1:]} is a directory; @PATH must name a file "
                                   f"(@@... is a literal text starting with '@')")
        try:
            with open(value[1:], "rb") as fh:
                data = fh.read(max_bytes + 1)
        except OSError as exc:
            from minarad.errors import NotFound

            raise NotFound(f"cannot read {value[1:]}: {exc.strerror}",
                           code="input_not_found") from exc
    else:
        return value
    return decode_text(data, max_bytes, origin=value)


class TextCommand(click.Command):
    """A command whose TEXT or QUERY may start with '-' (bullets, exclusions).

    Only this command's own option names are read as options; any other
    argument, ``- a bullet`` included, is positional.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value: set[str] = set()
        flags: set[str] = set()
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                names = set(param.opts) | set(param.secondary_opts)
                (flags if param.is_flag else takes_value).update(names)
        options: list[str] = []
        positional: list[str] = []
        it = iter(args)
        for arg in it:
            if arg == "--":
                positional.extend(it)
            elif arg in flags or arg.split("=", 1)[0] in takes_value and "=" in arg:
                options.append(arg)
            elif arg in takes_value:
                value = next(it, None)
                if value is None:
                    raise click.BadOptionUsage(arg, f"Option '{arg}' requires an argument.",
                                               ctx=ctx)
                options += [arg, value]
            else:
                positional.append(arg)
        return super().parse_args(ctx, options + ["--"] + positional)


#: The root group's options, accepted after a subcommand too: name -> (flags, help).
GLOBAL_OPTIONS = {
    "workspace": (("--workspace", "-w"), "Workspace directory (global option)."),
    "author": (("--as",), "Who is writing (global option)."),
}


def _set_flag(name: str) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
    def callback(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
        cli = ctx.find_object(CliContext)
        if value is not None and cli is not None:
            cli.flags[name] = value
            if name == "workspace":
                cli.create_missing = not value or \
                    ctx.find_root().invoked_subcommand in CREATORS
        return value

    return callback


def _global_params() -> list:
    params = [click.Option(list(opts), name, metavar="NAME" if name == "author" else "DIR",
                           expose_value=False, callback=_set_flag(name), help=help_,
                           hidden=True)
              for name, (opts, help_) in GLOBAL_OPTIONS.items()]
    params.append(click.Option(["--debug"], is_flag=True, expose_value=False, hidden=True,
                               help="Print the traceback of an error (global option)."))
    params.append(redact_param(hidden=True))
    return params


#: What ``--redact`` does, in every command's help that shows it.
REDACT_HELP = ("Write a text holding a credential with each value replaced by "
               "[REDACTED:<rule>] instead of refusing it (secret_detected, exit 6).")


def _redact(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    if value:
        from minarad.secrets.guard import redacting

        ctx.with_resource(redacting())
    return value


def redact_option(f: F) -> F:
    """Give ``f`` the ``--redact`` flag (shown in its help)."""
    return click.option("--redact", is_flag=True, expose_value=False, callback=_redact,
                        help=REDACT_HELP)(f)


def redact_param(hidden: bool = False) -> click.Option:
    """``--redact``: this command's writes redact credentials instead of being refused."""
    return click.Option(["--redact"], is_flag=True, expose_value=False, callback=_redact,
                        hidden=hidden, help=REDACT_HELP)


def accept_global_options(command: click.Command) -> click.Command:
    """Let ``command`` (and, for a group, every subcommand) take the global options.

    ``minara memory get MEMORY.md --as bob`` then means ``minara --as bob
    memory get MEMORY.md``; ``--json`` is added where a command lacks it.
    """
    if getattr(command, "_minara_globals", False):
        return command
    taken = {opt for p in command.params for opt in getattr(p, "opts", [])}
    extra = [p for p in _global_params() if not set(p.opts) & taken]
    if "--json" not in taken:
        extra.append(_json_param())
    command.params.extend(extra)
    command._minara_globals = True  # type: ignore[attr-defined]  # our marker on click's object
    for sub in getattr(command, "commands", {}).values():
        accept_global_options(sub)
    return command
