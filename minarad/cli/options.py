"""Shared CLI plumbing: the context object, output helpers, shared flags."""

from __future__ import annotations

import dataclasses
import json
import sys

import click


@dataclasses.dataclass
class CliContext:
    """What the root group resolved; commands build library objects from it."""

    flags: dict
    as_json: bool = False
    _settings: object = None
    _store: object = None

    @property
    def settings(self):
        """The effective :class:`minarad.config.Settings` (loaded once)."""
        if self._settings is None:
            from minarad.config import load_settings

            self._settings = load_settings(self.flags)
        return self._settings

    @property
    def author(self) -> str:
        return self.settings.author

    def store(self):
        """Open (seeding if needed) the workspace store, once per process."""
        if self._store is None:
            from minarad.store import Store

            self._store = Store.open(self.settings)
        return self._store


pass_ctx = click.make_pass_decorator(CliContext)


def emit(ctx: CliContext, data, text: str | None = None) -> None:
    """Print ``data`` as one JSON document with ``--json``, else ``text``."""
    if ctx.as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    elif text is not None:
        click.echo(text)


def json_option(f):
    """``--json`` on a subcommand, same as the global flag."""

    def _set(ctx, _param, value):
        if value:
            ctx.find_object(CliContext).as_json = True
        return value

    return click.option("--json", "as_json", is_flag=True, expose_value=False,
                        callback=_set, help="Print one JSON document.")(f)


def channel_option(f):
    """``--channel ID``: MEMORY.md means that conversation's memory."""
    return click.option("--channel", metavar="ID",
                        help="Use channels/ID/MEMORY.md for MEMORY.md.")(f)


def read_text_arg(value: str, max_bytes: int) -> str:
    """Resolve a TEXT argument: ``-`` is stdin, ``@path`` a file, ``@@...`` a literal ``@...``.

    The bytes are checked (size, UTF-8) by the store; here they are only read.
    """
    from minarad.store.content import decode_text

    if value.startswith("@@"):
        return value[1:]
    if value == "-":
        data = sys.stdin.buffer.read(max_bytes + 1)
    elif value.startswith("@") and len(value) > 1:
        try:
            with open(value[1:], "rb") as fh:
                data = fh.read(max_bytes + 1)
        except OSError as exc:
            from minarad.errors import NotFound

            raise NotFound(f"cannot read {value[1:]}: {exc.strerror}", code="input_not_found")
    else:
        return value
    return decode_text(data, max_bytes, origin=value)


class TextCommand(click.Command):
    """A command whose TEXT or QUERY may start with '-' (bullets, exclusions).

    Only this command's own option names are read as options; any other
    argument, ``- a bullet`` included, is positional.
    """

    def parse_args(self, ctx, args):
        takes_value, flags = set(), set()
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                names = set(param.opts) | set(param.secondary_opts)
                (flags if param.is_flag else takes_value).update(names)
        options, positional, it = [], [], iter(args)
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
