"""What an MCP client reads: every error as the project's JSON, schemas that do not mislead,
truthful annotations, and a quiet stderr. Driven by the SDK's own client over stdio."""

from __future__ import annotations

import json
import os
import re

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client as sdk_stdio
from mcp.shared.exceptions import MCPError

from tests.conftest import MINARA
from tests.mcp.conftest import TIMEOUT, run

#: (tool, arguments, code, field): failures of every kind, each answered the same way.
FAILURES = [
    ("memory_get", {"file": "nope.md"}, "file_not_found", None),            # the store's
    ("memory_get", {}, "invalid_input", "file"),                            # missing
    ("memory_get", {"file": 5}, "invalid_input", "file"),                   # wrong type
    ("memory_history", {"file": "MEMORY.md", "limit": "many"}, "invalid_input", "limit"),
    ("search_memory", {"query": "x", "mode": "telepathy"}, "invalid_input", "mode"),
    ("search_memory", {"query": "x", "mode": "hybrid"}, "no_embedding_model", None),
    ("memory_search", {"query": "x", "mode": "semantic"}, "no_embedding_model", None),
    ("learn_use", {"id": "x", "outcome": "maybe"}, "invalid_input", "outcome"),
    ("propose_fact", {"domain": "infra", "topic": "t", "content": "c",
                      "scope": "channel:team-a"}, "invalid_scope", "scope"),
    ("memory_search", {"query": "  "}, "empty_query", "query"),
    ("memory_append", {"file": "MEMORY.md", "text": "x", "channel": "../x"}, "invalid_channel",
     "channel"),
    ("no_such_tool", {}, "unknown_tool", None),
]
#: The codes that mean "the arguments were wrong": an example must never get one.
ARGUMENT_ERROR = re.compile(r"^(invalid_|unknown_kind$|unknown_mode$|empty_query$|path_)")
#: What each tool does to the workspace, as its annotations must say.
READS = {"memory_get", "memory_history", "memory_search", "search_memory", "wiki_list",
         "wiki_get", "wiki_search"}
REPLACES = {"memory_set", "wiki_put", "update_my_notes", "consolidate_memory"}
ADDS_ONCE = {"learn_capture"}  # a duplicate returns the existing record


def client(env: dict, errlog) -> Client:
    params = StdioServerParameters(command=MINARA, args=["mcp", "--as", "claude"], env=env,
                                   cwd=os.path.dirname(env["MINARA_WORKSPACE_DIR"]))
    return Client(sdk_stdio(params, errlog=errlog), read_timeout_seconds=TIMEOUT)


def test_every_failure_is_the_project_error_json_as_text_and_structured_content(
        mcp_env, tmp_path):
    errlog = open(tmp_path / "stderr.log", "w")  # noqa: SIM115 - the server's stderr

    async def session():
        async with client(mcp_env, errlog) as c:
            results = [await c.call_tool(name, args) for name, args, _, _ in FAILURES]
            refused = []
            for name, args in (("no_such_prompt", {}), ("session_context", {"channel": "../x"})):
                try:
                    await c.get_prompt(name, args)
                except MCPError as exc:
                    refused.append(exc.error)
            return results, refused

    results, (unknown, bad_channel) = run(session())
    errlog.close()
    for (name, args, code, field), result in zip(FAILURES, results, strict=True):
        text = result.content[0].text
        assert result.is_error, (name, args)
        assert json.loads(text) == result.structured_content, (name, text)  # no prefix
        body = result.structured_content
        assert body["error"] == code and body["message"], (name, args, body)
        assert body.get("field") == field, (name, args, body)
        assert "pydantic" not in text and "validation error" not in text, text
    assert "minara models install" in results[5].structured_content["message"]
    assert results[1].structured_content["message"] == "memory_get: file is required"
    assert unknown.code == -32602 and "no_such_prompt" in unknown.message
    assert bad_channel.code == -32602 and bad_channel.data["error"] == "invalid_channel"
    stderr = (tmp_path / "stderr.log").read_text()
    assert "Traceback" not in stderr and not re.search("[╭│╰─]", stderr), stderr
    told = [line for line in stderr.splitlines() if "no_such_prompt" in line]
    assert len(told) == 1, stderr  # one line, in the daemon's format
    assert re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} WARNING ", told[0]), told


def _examples_in(text: str) -> list[dict]:
    """Every JSON object written in ``text`` (a tool description's examples)."""
    found, decoder = [], json.JSONDecoder()
    for at in [m.start() for m in re.finditer(r"\{", text)]:
        try:
            value, _end = decoder.raw_decode(text, at)
        except ValueError:
            continue
        if isinstance(value, dict) and value not in found:
            found.append(value)
    return found


def _calls(tools) -> list[tuple[str, dict]]:
    """Each description example, and each schema example of an argument put in the first."""
    calls = []
    for tool in tools:
        examples = _examples_in(tool.description)
        assert examples, f"{tool.name}: no example in its description"
        calls += [(tool.name, example) for example in examples]
        for name, prop in tool.input_schema["properties"].items():
            for value in prop.get("examples", ()):
                calls.append((tool.name, {**examples[0], name: value}))
            for value in _enum_of(prop):
                calls.append((tool.name, {**examples[0], name: value}))
    return calls


def _enum_of(prop: dict) -> list:
    if "enum" in prop:
        return prop["enum"]
    return [v for option in prop.get("anyOf", ()) for v in option.get("enum", ())]


def test_schemas_examples_and_annotations_tell_the_truth(mcp_env, tmp_path):
    errlog = open(tmp_path / "stderr.log", "w")  # noqa: SIM115

    async def session():
        async with client(mcp_env, errlog) as c:
            tools = (await c.list_tools()).tools
            answers = [(name, args, await c.call_tool(name, args)) for name, args in
                       _calls(tools)]
            return tools, answers

    tools, answers = run(session())
    errlog.close()
    by_name = {tool.name: tool for tool in tools}
    refused = [(name, args, r.structured_content) for name, args, r in answers
               if r.is_error and ARGUMENT_ERROR.match(r.structured_content["error"])]
    assert refused == []
    assert len(answers) > 3 * len(tools)
    for tool in tools:
        props = tool.input_schema["properties"]
        for name, prop in props.items():  # examples live in "examples", where they are tried
            assert "e.g." not in prop.get("description", ""), (tool.name, name)
        if "mode" in props:
            assert sorted(_enum_of(props["mode"])) == ["hybrid", "keyword", "semantic"]
        if tool.name.startswith(("wiki_", "search_memory", "memory_search")) \
                and "channel" in props:
            assert "MEMORY.md" not in props["channel"]["description"], tool.name
        hints = tool.annotations
        assert hints is not None, tool.name
        assert hints.read_only_hint is (tool.name in READS), tool.name
        assert hints.destructive_hint is (tool.name in REPLACES), tool.name
        assert hints.idempotent_hint is (tool.name in READS | REPLACES | ADDS_ONCE), tool.name
    assert "kind:" not in by_name["wiki_search"].input_schema["properties"]["query"][
        "description"]
    assert "pages" in by_name["wiki_list"].input_schema["properties"]["channel"]["description"]
    scope = by_name["propose_fact"].input_schema["properties"]["scope"]
    assert "repo:" in scope["description"] and "channel:" not in scope["description"]
    assert not by_name["memory_append"].annotations.destructive_hint


def test_hybrid_without_a_model_is_the_same_error_in_the_cli(minara):
    proc = minara("search", "x", "--mode", "hybrid", "--json", check=1)
    assert json.loads(proc.stdout or proc.stderr)["error"] == "no_embedding_model"
