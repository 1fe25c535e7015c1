"""MCP tool-call round trips over stdio beside the CLI's wall time for the same operation.

One ``minara mcp`` server is started (the SDK's stdio client, as a harness
starts it) and warmed up; then, interleaved, each round times:

- ``memory_get MEMORY.md`` as an MCP tool call (round trip through the warm server);
- ``minara memory get MEMORY.md`` as a new CLI process;
- ``memory_append`` of one line as an MCP tool call (one commit each);
- ``minara memory append MEMORY.md ...`` as a new CLI process.

Medians, 90th percentiles and the CLI/MCP ratio are printed. Goals: a warm
``memory_get`` under 5 ms and ``memory_append`` under 20 ms (median).

Run: python bench/mcp.py [--rounds 100]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time

# this file is called mcp.py: keep its folder off the path so ``import mcp`` finds the SDK
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]

BIN = os.path.dirname(sys.executable)
MINARA = os.path.join(BIN, "minara")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cli_ms(env: dict, *args: str) -> float:
    start = time.perf_counter()
    subprocess.run([MINARA, *args], env=env, check=True, capture_output=True)
    return (time.perf_counter() - start) * 1000


async def tool_ms(client, name: str, arguments: dict) -> float:
    start = time.perf_counter()
    result = await client.call_tool(name, arguments)
    elapsed = (time.perf_counter() - start) * 1000
    if result.is_error:
        raise SystemExit(f"{name} failed: {result.content[0].text}")
    return elapsed


async def measure(env: dict, rounds: int) -> dict[str, list[float]]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=MINARA, args=["mcp", "--as", "bench"], env=env)
    times: dict[str, list[float]] = {k: [] for k in
                                     ("mcp get", "cli get", "mcp append", "cli append")}
    async with Client(params, read_timeout_seconds=60) as client:
        for i in range(5):  # warm up: imports, the store, the history cache
            await tool_ms(client, "memory_get", {"file": "MEMORY.md"})
            await tool_ms(client, "memory_append", {"file": "MEMORY.md", "text": f"- warm {i}"})
        for i in range(rounds):
            times["mcp get"].append(await tool_ms(client, "memory_get", {"file": "MEMORY.md"}))
            times["cli get"].append(cli_ms(env, "memory", "get", "MEMORY.md"))
            times["mcp append"].append(await tool_ms(
                client, "memory_append", {"file": "MEMORY.md", "text": f"- mcp line {i}"}))
            times["cli append"].append(cli_ms(env, "memory", "append", "MEMORY.md",
                                              f"- cli line {i}"))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MINARA_")}
        env.update(MINARA_WORKSPACE_DIR=os.path.join(tmp, "ws"), MINARA_AUTHOR="bench",
                   XDG_STATE_HOME=os.path.join(tmp, "state"), HOME=tmp)
        subprocess.run([MINARA, "init"], env=env, check=True, capture_output=True)
        times = asyncio.run(measure(env, args.rounds))
    print(f"{args.rounds} rounds, interleaved (ms)")
    print(f"{'operation':<12} {'median':>8} {'p90':>8}")
    for name, values in times.items():
        print(f"{name:<12} {statistics.median(values):8.2f} {percentile(values, 0.9):8.2f}")
    for verb in ("get", "append"):
        ratio = statistics.median(times[f"cli {verb}"]) / statistics.median(times[f"mcp {verb}"])
        print(f"memory {verb}: the CLI takes {ratio:.1f}x the MCP round trip")


if __name__ == "__main__":
    main()
