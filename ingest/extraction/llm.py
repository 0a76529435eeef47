"""LLM extraction through instructor, and the factory that picks a backend from the settings.

Two layers of retry, both bounded by the service's settings:
- instructor re-asks when the answer does not validate against the response model
  (`max_retries`), sending the validation errors back to the model;
- transport failures (timeouts, connection errors, 408/409/429, 5xx) are retried here with
  exponential backoff (`transport_retries`, `backoff_initial_s`, `backoff_max_s`), honouring a
  Retry-After header. The SDKs' own retries are switched off so the two do not multiply.
When both are spent, `ExtractionFailed` is raised with the reason. API keys never reach a log
line or an error message: reasons are redacted before they leave this module.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
from dataclasses import dataclass
from typing import Any

import anthropic
import instructor
import openai
from instructor.core.exceptions import IncompleteOutputException, InstructorRetryException
from instructor.core.hooks import Hooks
from pydantic import SecretStr, ValidationError

from ingest.extraction.extractor import ExtractionFailed, Extractor, Usage
from ingest.extraction.models import ChunkInput, ExtractionResult
from ingest.extraction.offline import OfflineExtractor
from ingest.extraction.prompts import EXTRACT, Prompt
from kg.config import LLMService, Settings, api_key_from_env

log = logging.getLogger(__name__)

_MODES = {"tools": instructor.Mode.TOOLS, "json": instructor.Mode.JSON}
_TRANSIENT_STATUS = {408, 409, 429}
_KEYLIKE = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-*.]{6,}")
_NO_KEY = "not-needed"  # local OpenAI-compatible servers (Ollama, vLLM) ignore the key


@dataclass(frozen=True)
class _Transient:
    """A failure worth retrying after a pause (the server's Retry-After, if it sent one)."""

    reason: str
    retry_after: float | None


class _UsageMeter:
    """Counts the requests and answered calls of one extraction (re-asks included) via instructor's hooks."""

    def __init__(self) -> None:
        self.usage = Usage()
        self.requests = 0
        self.hooks = Hooks()
        self.hooks.on("completion:kwargs", self._on_request)
        self.hooks.on("completion:response", self._on_response)

    def _on_request(self, *args: Any, **kwargs: Any) -> None:
        self.requests += 1

    def _on_response(self, response: Any, *args: Any, **kwargs: Any) -> None:
        u = getattr(response, "usage", None)
        given = getattr(u, "input_tokens", None) or getattr(u, "prompt_tokens", None) or 0
        taken = getattr(u, "output_tokens", None) or getattr(u, "completion_tokens", None) or 0
        self.usage = self.usage + Usage(1, int(given), int(taken))


class LLMExtractor:
    """Extraction by one `[llm.services.<name>]` endpoint (Anthropic or OpenAI-compatible)."""

    def __init__(
        self, name: str, service: LLMService, *, api_key: SecretStr | None = None, prompt: Prompt = EXTRACT
    ) -> None:
        self.backend = name
        self.model = service.model
        self.prompt_version = prompt.version
        self._service = service
        self._prompt = prompt
        key = api_key or service.api_key or api_key_from_env(service.provider)
        if key is None and service.base_url is None:
            raise ValueError(
                f"llm service {name!r} ({service.provider}) has no api_key and "
                f"{service.provider.upper()}_API_KEY is not set"
            )
        self._key = key  # kept as a SecretStr: its repr is masked
        self._sdk, self._client = self._connect(service, key.get_secret_value() if key else _NO_KEY)

    @staticmethod
    def _connect(service: LLMService, key: str) -> tuple[Any, Any]:
        common: dict[str, Any] = {"api_key": key, "timeout": service.timeout_s, "max_retries": 0}
        if service.base_url:
            common["base_url"] = service.base_url
        mode = _MODES[service.mode]
        if service.provider == "anthropic":
            sdk = anthropic.AsyncAnthropic(**common)
            return sdk, instructor.from_anthropic(sdk, mode=mode)
        sdk = openai.AsyncOpenAI(**common)
        return sdk, instructor.from_openai(sdk, mode=mode)

    async def extract(self, chunk: ChunkInput) -> tuple[ExtractionResult, Usage]:
        meter = _UsageMeter()
        attempts = self._service.transport_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                return await self._ask(chunk, meter), meter.usage
            except Exception as exc:  # noqa: BLE001 - every failure is classified below
                failure = self._classify(exc)
            if isinstance(failure, _Transient) and attempt < attempts:
                delay = self._delay(attempt, failure.retry_after)
                log.warning(
                    "extraction %s:%s attempt %d/%d: %s; retrying in %.2fs",
                    self.backend, self.model, attempt, attempts, failure.reason, delay,
                )
                await asyncio.sleep(delay)
                continue
            reason = failure.reason if isinstance(failure, _Transient) else failure
            log.error("extraction %s:%s failed for session %s: %s", self.backend, self.model, chunk.session_id, reason)
            raise ExtractionFailed(
                reason, backend=self.backend, model=self.model, attempts=meter.requests, usage=meter.usage
            ) from None
        raise AssertionError("unreachable")

    async def _ask(self, chunk: ChunkInput, meter: _UsageMeter) -> ExtractionResult:
        options: dict[str, Any] = {"model": self.model, "max_tokens": self._service.max_tokens}
        if self._service.temperature is not None and self._service.provider == "openai":
            options["temperature"] = self._service.temperature  # anthropic 2.x has no sampling knobs
        return await self._client.create(
            response_model=self._prompt.response_model,
            messages=self._prompt.build(chunk),  # rebuilt per attempt: re-asks append to it
            max_retries=self._service.max_retries,
            context=chunk.validation_context(),
            strict=False,
            hooks=meter.hooks,
            **options,
        )

    def _classify(self, exc: BaseException) -> _Transient | str:
        """A transient failure to retry, or the reason to give up, redacted."""
        cause = exc
        while isinstance(cause, InstructorRetryException) and cause.__cause__ is not None:
            cause = cause.__cause__
        if isinstance(cause, (anthropic.APITimeoutError, openai.APITimeoutError)):
            return _Transient(f"timed out after {self._service.timeout_s:g}s", None)
        if isinstance(cause, (anthropic.APIConnectionError, openai.APIConnectionError)):
            return _Transient(self._redact(f"connection failed: {cause}"), None)
        if isinstance(cause, (anthropic.APIStatusError, openai.APIStatusError)):
            status = cause.status_code
            reason = self._redact(f"HTTP {status}: {_error_message(cause)}")
            if status in _TRANSIENT_STATUS or status >= 500:
                return _Transient(reason, _retry_after(cause.response.headers))
            return reason
        if isinstance(cause, json.JSONDecodeError) and not getattr(exc, "failed_attempts", None):
            n = getattr(exc, "n_attempts", None) or 1  # instructor re-sends these like invalid answers
            return self._redact(f"the endpoint's response body was not JSON ({n} attempt(s)): {cause}")
        if isinstance(cause, IncompleteOutputException):
            return f"the answer was cut off at max_tokens={self._service.max_tokens}"
        if isinstance(cause, ValidationError) or (
            isinstance(exc, InstructorRetryException) and isinstance(cause, ValueError)
        ):
            n = getattr(exc, "n_attempts", None) or self._service.max_retries + 1
            return self._redact(f"the answer did not validate after {n} attempt(s): {_first_error(cause)}")
        return self._redact(f"{type(cause).__name__}: {cause}")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        s = self._service
        if retry_after is not None:
            return min(max(retry_after, 0.0), s.backoff_max_s)
        return min(s.backoff_initial_s * 2 ** (attempt - 1), s.backoff_max_s) * random.uniform(0.5, 1.0)

    def _redact(self, text: str) -> str:
        secret = self._key.get_secret_value() if self._key else ""
        if len(secret) >= 8:  # a toy key like "x" would mangle every word
            text = text.replace(secret, "[redacted]")
        return _KEYLIKE.sub("[redacted]", text)[:500]

    async def aclose(self) -> None:
        await self._sdk.close()


def _error_message(exc: anthropic.APIStatusError | openai.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    kind, message = error.get("type"), error.get("message")
    if message:
        return f"{kind}: {message}" if kind else str(message)
    return exc.response.reason_phrase or type(exc).__name__


def _retry_after(headers: Any) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return float(value) * scale
            except ValueError:
                return None  # an HTTP date: fall back to the backoff schedule
    return None


def _first_error(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        errors = exc.errors(include_url=False, include_input=False)
        first = errors[0] if errors else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{exc.error_count()} error(s), first at {where or 'root'}: {first.get('msg', '')}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def extractor_for(settings: Settings, prompt: Prompt = EXTRACT) -> Extractor:
    """The extractor `[memory.indexing] backend` names: a service, "offline", or "auto". Other
    structured tasks (session summaries) pass their own `prompt` to use the same backends."""
    backend = settings.memory.indexing.backend
    services = settings.llm.services
    if backend == "offline":
        return OfflineExtractor()
    if backend == "auto":
        key = api_key_from_env("anthropic")
        if key is None:
            return OfflineExtractor()
        name, service = next(
            ((n, s) for n, s in services.items() if s.provider == "anthropic"), ("anthropic", LLMService())
        )
        return LLMExtractor(name, service, api_key=key, prompt=prompt)
    if backend not in services:
        known = ", ".join(sorted(services)) or "none configured"
        raise ValueError(
            f"memory.indexing.backend = {backend!r} is not 'offline', 'auto' or a service in [llm.services] ({known})"
        )
    return LLMExtractor(backend, services[backend], prompt=prompt)
