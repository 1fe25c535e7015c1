"""Claude Code hook payloads and transcripts."""

import json

import pytest

from minarad.errors import InvalidInput
from minarad.turns.harness import (
    last_assistant_text,
    parse_claude_code_payload,
    read_transcript_reply,
    reply_of,
)


def transcript_lines():
    return [
        json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}),
        json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "first"}]}}),
        json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}}),
        "not json",
        json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Saved."}, {"type": "text", "text": "BOOTSTRAP_DONE"}]}}),
        json.dumps({"type": "system", "content": "done"}),
    ]


def test_stop_payload_with_last_message():
    payload = parse_claude_code_payload(json.dumps({
        "session_id": "abc", "transcript_path": "/nowhere.jsonl", "cwd": "/p",
        "permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": False,
        "last_assistant_message": "All done."}))
    assert (payload.session_id, payload.event, payload.message) == ("abc", "Stop", "All done.")
    assert reply_of(payload) == "All done."


def test_reply_falls_back_to_the_transcript(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(transcript_lines()) + "\n")
    payload = parse_claude_code_payload(json.dumps({
        "session_id": "abc", "transcript_path": str(path), "hook_event_name": "Stop"}))
    assert reply_of(payload) == "Saved.\nBOOTSTRAP_DONE"
    assert read_transcript_reply(str(tmp_path / "missing.jsonl")) is None


def test_last_assistant_text_skips_tool_calls():
    assert last_assistant_text(transcript_lines()[:3]) == "first"
    assert last_assistant_text([]) is None


@pytest.mark.parametrize("text", ["", "[]", "{}", '{"session_id": ""}', "nope"])
def test_bad_payloads_are_refused(text):
    with pytest.raises(InvalidInput):
        parse_claude_code_payload(text)
