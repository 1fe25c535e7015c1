"""One small client for any OpenAI-compatible chat-completions endpoint.

OpenAI, Ollama, llama.cpp's server, vLLM and the like all answer
``POST {base}/chat/completions``. The settings are ``MINARA_LLM_BASE_URL``
(for example ``http://127.0.0.1:11434/v1``), ``MINARA_LLM_MODEL``,
``MINARA_LLM_API_KEY`` (or ``OPENAI_API_KEY``), ``MINARA_LLM_TIMEOUT_S`` and
``MINARA_LLM_RETRIES``.

Every failure is an :class:`LLMError` with a code a job can report:
``llm_not_configured``, ``llm_unreachable``, ``llm_timeout``,
``llm_http_error``, ``llm_bad_answer`` (not the JSON shape of a chat
completion), ``llm_answer_too_large`` (over :data:`MAX_ANSWER_BYTES`, cut
while reading) and ``llm_empty_answer``. Unreachable, time-outs, 429 and 5xx are
retried with backoff; other answers are not.

A credential in a request's messages is replaced by ``[REDACTED:<rule>]``
before it is sent, and one in an answer (or in an error body) before anyone
sees it; :attr:`ChatClient.redacted` lists what was redacted from answers, so
that a job's commit message can say so.

httpx is imported on first use, so commands that never talk to a model do
not pay for it.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from minarad.errors import MinaraError
from minarad.httpbody import Retry, post_json, with_retries

if TYPE_CHECKING:
    from pathlib import Path

    from minarad.config import Settings
    from minarad.secrets.findings import Finding


class LLMError(MinaraError):
    """The model could not give a usable answer."""

    code = "llm_error"
    exit_code = 1
    http_status = 502


#: The largest answer body read from an endpoint (a chat completion is far smaller).
MAX_ANSWER_BYTES = 4 * 1024 * 1024
#: Status codes worth a second try.
_RETRYABLE = {408, 409, 425, 429, 500, 502, 503, 504}


class ChatClient:
    """Send chat messages to one model and return its text answer.

    Args:
        base_url: the endpoint's base, up to and including ``/v1``.
        model: the model name the endpoint expects.
        api_key: sent as a bearer token when given.
        timeout_s: the longest one request may take, connect to last byte (a total
            deadline, not a time-out per read).
        retries: further tries after a retryable failure.
        backoff_s: the first pause between tries (doubled each time).
        secrets_root: the workspace whose ``.minara-secrets-allow`` applies to answers.

    Attributes:
        redacted: the credentials redacted from this client's answers so far.
    """

    def __init__(self, base_url: str, model: str, *, api_key: str = "", timeout_s: float = 60.0,
                 retries: int = 2, backoff_s: float = 0.5, secrets_root: str | Path | None = None):
        if not base_url or not model:
            raise LLMError("no LLM configured: set MINARA_LLM_BASE_URL and MINARA_LLM_MODEL "
                           "(any OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1)",
                           code="llm_not_configured")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.retries = max(0, retries)
        self.backoff_s = backoff_s
        self.secrets_root = secrets_root
        self.redacted: list[Finding] = []

    @classmethod
    def from_settings(cls, settings: Settings, **overrides) -> ChatClient:
        """A client for the configured model (``llm_not_configured`` when there is none)."""
        values: dict = dict(base_url=settings.llm_base_url, model=settings.llm_model,
                            api_key=settings.llm_api_key, timeout_s=settings.llm_timeout_s,
                            retries=settings.llm_retries,
                            secrets_root=os.path.expanduser(os.fspath(settings.workspace)))
        values.update(overrides)
        return cls(values.pop("base_url"), values.pop("model"), **values)

    def complete(self, messages: list[dict], *, max_tokens: int | None = None,
                 temperature: float = 0.0) -> str:
        """Return the model's answer to ``messages`` (``[{"role", "content"}, ...]``).

        Raises:
            LLMError: after the last try failed, with the reason's code.
        """
        body: dict = {"model": self.model, "messages": [self._outgoing(m) for m in messages],
                      "temperature": temperature}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        return with_retries(lambda: self._clean(self._post(body)), self.retries,
                            self.backoff_s)

    def _outgoing(self, message: dict) -> dict:
        """``message`` with every credential in its text redacted: the provider never sees one.

        Jobs send what the workspace holds (journals, MEMORY.md); a credential
        there (an editor save held back, a file from before the check) stays
        on this machine.
        """
        content = message.get("content")
        if not isinstance(content, str):
            return message
        from minarad.secrets.guard import redact_answer

        return {**message, "content": redact_answer(content, root=self.secrets_root)}

    def _clean(self, text: str) -> str:
        """``text`` with every credential redacted (and recorded in :attr:`redacted`)."""
        from minarad.secrets.guard import redact_answer

        return redact_answer(text, root=self.secrets_root, found=self.redacted)

    def _post(self, body: dict) -> str:
        where = f"the LLM at {self.base_url}"
        status, raw = post_json(
            f"{self.base_url}/chat/completions", body, api_key=self.api_key,
            timeout_s=self.timeout_s, cap=MAX_ANSWER_BYTES,
            timed_out=LLMError(f"{where} did not answer within {self.timeout_s:g} s",
                               code="llm_timeout"),
            too_large=LLMError(f"{where} sent more than {MAX_ANSWER_BYTES:,} bytes; "
                               "the answer was dropped", code="llm_answer_too_large"),
            unreachable=lambda exc: LLMError(f"{where} is unreachable: {exc}",
                                             code="llm_unreachable"))
        if status != 200:
            text = raw[:200].decode("utf-8", "replace")
            error = LLMError(f"{where} answered HTTP {status}: {self._clean(text)}",
                             code="llm_http_error", status=status)
            if status in _RETRYABLE:
                raise Retry(error)
            raise error
        return _answer_text(raw)


def _answer_text(raw: bytes) -> str:
    try:
        data = json.loads(raw)
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        text = raw[:200].decode("utf-8", "replace")
        raise LLMError(f"the LLM's answer is not a chat completion: {text!r}",
                       code="llm_bad_answer") from None
    if not isinstance(content, str):
        raise LLMError("the LLM's answer has no text content", code="llm_bad_answer")
    if not content.strip():
        raise LLMError("the LLM gave an empty answer", code="llm_empty_answer")
    return content
