"""The LLM client against a real HTTP server on loopback that also fails and stalls."""

from __future__ import annotations

import pytest

from minarad.config import load_settings
from minarad.llm import ChatClient, LLMError


def client(llm, **kw):
    kw.setdefault("timeout_s", 1.0)
    kw.setdefault("retries", 0)
    return ChatClient(llm.base_url, "m", backoff_s=0.01, **kw)


def ask(c):
    return c.complete([{"role": "user", "content": "hello there\nmore"}])


def test_answer_text_and_request_shape(llm):
    c = client(llm, api_key="k-1")
    assert ask(c) == "hello there"
    sent = llm.requests[-1]
    assert sent["model"] == "m" and sent["messages"][0]["role"] == "user"
    assert sent["temperature"] == 0.0


@pytest.mark.parametrize("step,code", [
    (("status", 400), "llm_http_error"),
    (("garbage",), "llm_bad_answer"),
    (("no_choices",), "llm_bad_answer"),
    (("empty",), "llm_empty_answer"),
    (("status", 503), "llm_http_error"),
])
def test_every_failure_is_an_llm_error_with_its_code(llm, step, code):
    llm.script(step)
    with pytest.raises(LLMError) as err:
        ask(client(llm))
    assert err.value.code == code


def test_a_stall_is_a_timeout(llm):
    llm.script(("stall", 1.5))
    with pytest.raises(LLMError) as err:
        ask(client(llm, timeout_s=0.3))
    assert err.value.code == "llm_timeout"


def test_an_answer_that_trickles_in_is_cut_at_the_total_deadline(llm):
    # 100 bytes, one each 0.2 s: every read is quick, the whole would take 20 s.
    llm.script(("trickle", 0.2, 100))
    with pytest.raises(LLMError) as err:
        ask(client(llm, timeout_s=1.0))
    assert err.value.code == "llm_timeout"
    assert "within 1 s" in err.value.message


def test_an_answer_over_the_size_cap_is_refused_while_it_arrives(llm):
    from minarad.llm import MAX_ANSWER_BYTES

    llm.script(("huge", 16 * MAX_ANSWER_BYTES))
    with pytest.raises(LLMError) as err:
        ask(client(llm, timeout_s=30.0, retries=2))
    assert err.value.code == "llm_answer_too_large"
    assert len(llm.requests) == 1  # not worth a second try


def test_retryable_failures_are_retried_and_others_are_not(llm):
    llm.script(("status", 503), ("status", 429), ("text", "third time"))
    assert ask(client(llm, retries=2)) == "third time"
    assert len(llm.requests) == 3
    llm.script(("status", 401), ("text", "never asked"))
    with pytest.raises(LLMError):
        ask(client(llm, retries=3))
    assert len(llm.requests) == 4


def test_unreachable_endpoint(llm):
    url = llm.base_url
    llm.stop()
    with pytest.raises(LLMError) as err:
        ChatClient(url, "m", timeout_s=0.5, retries=0).complete([{"role": "user",
                                                                  "content": "x"}])
    assert err.value.code in ("llm_unreachable", "llm_timeout")
    llm.start = lambda: llm  # already stopped; the fixture's stop must not fail twice
    llm.stop = lambda: None


def test_settings_configure_the_client_and_hide_the_key(llm, env):
    settings = load_settings({}, env={**env, **llm.env(), "OPENAI_API_KEY": "sk-secret"})
    c = ChatClient.from_settings(settings)
    assert c.base_url == llm.base_url and c.api_key == "sk-secret"
    assert settings.sources["llm_api_key"] == "env:OPENAI_API_KEY"
    assert "sk-secret" not in repr(settings) and "sk-secret" not in str(settings.as_dict())
    with pytest.raises(LLMError) as err:
        ChatClient.from_settings(load_settings({}, env=env))
    assert err.value.code == "llm_not_configured"


def test_a_credential_in_the_request_never_reaches_the_provider(llm):
    from tests.secrets.samples import samples

    rule, line, value = samples()[0]
    c = client(llm)
    c.complete([{"role": "system", "content": "keep memory"},
                {"role": "user", "content": f"journal:\n{line}\nnothing else"}])
    sent = llm.requests[-1]["messages"]
    assert value not in str(sent)
    assert f"[REDACTED:{rule}]" in sent[1]["content"] and sent[0]["content"] == "keep memory"
    assert c.redacted == []  # the answers held none
