"""The click application behind ``minara``: assembles the groups, maps errors.

Each group lives in its own module and is registered in :data:`GROUPS`;
heavy libraries are imported inside commands, never here.
"""

from __future__ import annotations

import sys

import click

from minarad import __version__
from minarad.cli.options import APP_PROVIDER, CREATORS, CliContext, RunHere, \
    accept_global_options, redact_option
from minarad.errors import MinaraError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

#: command name -> "module:attribute", loaded only when that command runs.
GROUPS = {
    "memory": "minarad.cli.memory:memory",
    # -- the REPL's slash verbs: a workspace file by name --
    "soul": "minarad.cli.slash:soul",
    "identity": "minarad.cli.slash:identity",
    "heartbeat": "minarad.cli.slash:heartbeat",
    "workspace": "minarad.cli.slash:workspace",
    "config": "minarad.cli.config_cmd:config",
    "import": "minarad.cli.importer:import_",
    "init": "minarad.cli.config_cmd:init",
    "context": "minarad.cli.context:context",
    "turn-end": "minarad.cli.context:turn_end",
    "status": "minarad.cli.daemon:status",
    "service": "minarad.cli.daemon:service",
    "search": "minarad.cli.search:search",
    "index": "minarad.cli.search:index",
    # -- learn store, promotion, dreaming, scheduler --
    "learn": "minarad.cli.learn:learn",
    "jobs": "minarad.cli.jobs:jobs",
    "dream": "minarad.cli.jobs:dream",
    # -- wiki --
    "wiki": "minarad.cli.wiki:wiki",
    # -- knowledge --
    "fact": "minarad.cli.knowledge:fact",
    "policy": "minarad.cli.knowledge:policy",
    "grant": "minarad.cli.knowledge:grant",
    "remember": "minarad.cli.agentmemory:remember",
    "consolidate": "minarad.cli.agentmemory:consolidate",
    "notes": "minarad.cli.agentmemory:notes",
    "graph": "minarad.cli.knowledge:graph",
    "decisions": "minarad.cli.agentmemory:decisions",
    "channel": "minarad.cli.agentmemory:channel",
    # -- search --
    "models": "minarad.cli.models:models",
    # -- HTTP gateway --
    "token": "minarad.cli.gateway:token",
    "ui": "minarad.cli.gateway:ui",
    # -- artifacts and files --
    "artifact": "minarad.cli.artifacts:artifact",
    "files": "minarad.cli.artifacts:files",
    # -- sync --
    "remote": "minarad.cli.sync:remote",
    "sync": "minarad.cli.sync:sync",
    "doctor": "minarad.cli.doctor:doctor",
    # -- MCP --
    "mcp": "minarad.cli.mcp:mcp",
    # -- budgets and proposals --
    "proposals": "minarad.cli.proposals:proposals",
    "compact": "minarad.cli.proposals:compact",
    # -- secrets --
    "secrets": "minarad.cli.secrets:secrets",
}


#: Commands the daemon never runs for a client of its socket (servers, and the
#: daemon's own service): the client runs them itself.
RUN_BY_CLIENT = frozenset({"service", "ui", "mcp"})


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in GROUPS and not args[0].startswith("-"):
            # click suggests from the commands already loaded (none here)
            raise click.exceptions.NoSuchCommand(args[0], possibilities=list(GROUPS), ctx=ctx)
        name, command, rest = super().resolve_command(ctx, args)
        if name in RUN_BY_CLIENT and APP_PROVIDER.get() is not None:
            raise RunHere(f"{name} runs in the client")
        return name, command, rest

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(GROUPS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        spec = GROUPS.get(name)
        if spec is None:
            return None
        import importlib

        module, attr = spec.split(":")
        return accept_global_options(getattr(importlib.import_module(module), attr))


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--workspace", "-w", metavar="DIR", envvar=None,
              help="Workspace directory [env MINARA_WORKSPACE_DIR; default ~/.minara/workspace].")
@click.option("--as", "author", metavar="NAME",
              help="Who is writing: recorded as the commit author [env MINARA_AUTHOR].")
@click.option("--json", "as_json", is_flag=True, help="Machine output: one JSON document.")
@click.option("--debug", is_flag=True,
              help="Print the traceback behind an error [env MINARA_DEBUG=1].")
@click.version_option(__version__, prog_name="minara")
@redact_option
@click.pass_context
def cli(ctx: click.Context, workspace: str | None, author: str | None, as_json: bool,
        debug: bool) -> None:
    """minara: an agent's Markdown memory, versioned in git and searchable.

    Every write is a git commit in the workspace's own repository; a stale
    write is refused with memory_version_conflict (exit 3).

    Exit codes: 0 ok, 1 error, 2 usage, 3 version conflict, 4 not found,
    5 forbidden, 6 secret detected (a credential in the text: nothing was
    written). The global options (--workspace, --as, --json, --debug,
    --redact) may also follow the subcommand.

    Example: minara memory append MEMORY.md "- prefers short answers"
    """
    ctx.obj = CliContext(flags={"workspace": workspace, "author": author}, as_json=as_json,
                         create_missing=not workspace or ctx.invoked_subcommand in CREATORS)
    ctx.call_on_close(ctx.obj.close)


def _report(err: MinaraError, as_json: bool, debug: bool = False) -> None:
    if debug:
        import traceback

        traceback.print_exc(file=sys.stderr)
    if as_json:
        import json

        click.echo(json.dumps(err.to_dict(), ensure_ascii=False), err=True)
    else:
        click.echo(f"minara: error: {err.message}", err=True)


def main(argv: Sequence[str] | None = None, terminal_width: int | None = None) -> int:
    """Run the CLI; every error becomes one line (JSON with ``--json``) and its exit code.

    With ``--debug`` or ``MINARA_DEBUG=1`` the traceback behind the line is
    printed first. ``terminal_width`` is the client's, when the daemon runs
    the command (help text wraps as it would in the client).
    """
    from minarad.config import debug_requested

    args = sys.argv[1:] if argv is None else list(argv)
    as_json = "--json" in args
    debug = debug_requested(args)
    try:
        cli.main(args=args, prog_name="minara", standalone_mode=False,
                 terminal_width=terminal_width)
    except MinaraError as err:
        _report(err, as_json, debug)
        return err.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        if as_json:
            _report(MinaraError(exc.format_message(), code="usage"), True)
        else:
            exc.show()
        return exc.exit_code
    except click.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        _report(MinaraError(f"{exc.strerror or exc}{where}", code="os_error"), as_json, debug)
        return 1
    except Exception as exc:  # a bug: one line, never a traceback dump of user data
        _report(MinaraError(f"unexpected {type(exc).__name__}: {exc} (please report this; "
                            f"MINARA_DEBUG=1 shows where)", code="unexpected_error"),
                as_json, debug)
        return 1
    return 0
