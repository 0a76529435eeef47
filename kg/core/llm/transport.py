"""The one LLM transport and its usage meter: every LLM call of the write path goes through here.

`LLMTransport` is one async instructor client per `[llm.services.<name>]` endpoint (Anthropic or
OpenAI-compatible). Two layers of retry, both bounded by the service's settings:
- instructor re-asks when the answer does not validate against the response model
  (`max_retries`), sending the validation errors back to the model;
- transport failures (timeouts, connection errors, 408/409/429, 5xx) are retried here with
  exponential backoff (`transport_retries`, `backoff_initial_s`, `backoff_max_s`), honouring a
  Retry-After header. The SDKs' own retries are switched off so the two do not multiply.
When both are spent, `LLMFailed` is raised with the reason, redacted: API keys never reach a log
line or an error message.

Every answered request is recorded as an `LLMCall` (purpose, model, prompt version, tokens,
latency) in the meters of `kg.core.llm.usage` open around the work (a job, an indexing run); with
tracing on, each `ask` is a span (`llm <purpose>`) holding the model, the requests and the tokens.
`service_for(settings)` is the "auto" backend rule, written once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from pydantic import SecretStr, ValidationError

from kg.core.llm.usage import LLMCall, UsageMeter, add_usage, metering, record
from kg.core.settings.tree import LLMService, Settings, api_key_from_env
from kg.core.telemetry.hooks import span

if TYPE_CHECKING:  # the SDKs load with the first transport, never with `import kg` (a CLI's --help)
    import anthropic
    import openai

log = logging.getLogger(__name__)

Messages = list[dict[str, str]]
_TRANSIENT_STATUS = {408, 409, 429}
_KEYLIKE = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-*.]{6,}")
_NO_KEY = "not-needed"  # local OpenAI-compatible servers (Ollama, vLLM) ignore the key


class _Attempt:
    """Instructor hooks of one `ask`: counts requests and records each answer with its latency."""

    def __init__(self, purpose: str, model: str, prompt_version: str) -> None:
        self.purpose, self.model, self.prompt_version = purpose, model, prompt_version
        self.requests = 0
        self.calls: list[LLMCall] = []
        self._sent = time.perf_counter()
        from instructor.core.hooks import Hooks

        self.hooks = Hooks()
        self.hooks.on("completion:kwargs", self._on_request)
        self.hooks.on("completion:response", self._on_response)

    def _on_request(self, *args: Any, **kwargs: Any) -> None:
        self.requests += 1
        self._sent = time.perf_counter()

    def _on_response(self, response: Any, *args: Any, **kwargs: Any) -> None:
        u = getattr(response, "usage", None)
        given = getattr(u, "input_tokens", None) or getattr(u, "prompt_tokens", None) or 0
        taken = getattr(u, "output_tokens", None) or getattr(u, "completion_tokens", None) or 0
        call = LLMCall(self.purpose, self.model, self.prompt_version, int(given), int(taken),
                       round((time.perf_counter() - self._sent) * 1000, 1))
        self.calls.append(call)
        record(call)


# -- the transport -------------------------------------------------------------------------------

class LLMFailed(RuntimeError):
    """A call gave up; `reason` is redacted. `attempts` counts the requests sent, `calls` the
    answered ones (what they cost)."""

    def __init__(self, reason: str, *, attempts: int, calls: list[LLMCall]) -> None:
        super().__init__(reason)
        self.reason, self.attempts, self.calls = reason, attempts, calls


@dataclass(frozen=True)
class Transient:
    """A failure worth retrying after a pause (the server's Retry-After, if it sent one)."""

    reason: str
    retry_after: float | None


class LLMTransport:
    """One `[llm.services.<name>]` endpoint: an async instructor client, retries, redaction."""

    def __init__(self, name: str, service: LLMService, *, api_key: SecretStr | None = None) -> None:
        self.backend = name
        self.model = service.model
        self.service = service
        key = api_key or service.api_key or api_key_from_env(service.provider)
        if key is None and service.base_url is None:
            raise ValueError(
                f"llm service {name!r} ({service.provider}) has no api_key and "
                f"{service.provider.upper()}_API_KEY is not set"
            )
        self._key = key  # kept as a SecretStr: its repr is masked
        common: dict[str, Any] = {"api_key": key.get_secret_value() if key else _NO_KEY,
                                  "timeout": service.timeout_s, "max_retries": 0}
        if service.base_url:
            common["base_url"] = service.base_url
        import instructor

        mode = {"tools": instructor.Mode.TOOLS, "json": instructor.Mode.JSON}[service.mode]
        if service.provider == "anthropic":
            import anthropic

            self.sdk: Any = anthropic.AsyncAnthropic(**common)
            self.client = instructor.from_anthropic(self.sdk, mode=mode)
        else:
            import openai

            self.sdk = openai.AsyncOpenAI(**common)
            self.client = instructor.from_openai(self.sdk, mode=mode)
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    async def ask(self, purpose: str, prompt_version: str, response_model: type[Any],
                  messages: Messages | Callable[[], Messages], *, context: dict[str, Any] | None = None,
                  max_tokens: int | None = None) -> tuple[Any, list[LLMCall]]:
        """The validated answer and the calls it took; `LLMFailed` when the retries are spent.
        `messages` may be a function: the messages are rebuilt per attempt (re-asks append to them)."""
        self.loop = asyncio.get_running_loop()
        s = self.service
        options: dict[str, Any] = {"model": self.model, "max_tokens": min(s.max_tokens, max_tokens or s.max_tokens)}
        if s.temperature is not None and s.provider == "openai":
            options["temperature"] = s.temperature  # anthropic 2.x has no sampling knobs
        attempt_hooks = _Attempt(purpose, self.model, prompt_version)
        attributes = (("gen_ai.operation.name", "chat"), ("gen_ai.provider.name", s.provider),
                      ("gen_ai.request.model", self.model), ("kg.llm.purpose", purpose),
                      ("kg.prompt_version", prompt_version))
        with span(f"llm {purpose}", attributes) as traced:
            try:
                return await self._attempts(attempt_hooks, response_model, messages, context, options)
            finally:
                traced.set("kg.llm.requests", attempt_hooks.requests)
                traced.set("gen_ai.usage.input_tokens", sum(c.input_tokens for c in attempt_hooks.calls))
                traced.set("gen_ai.usage.output_tokens", sum(c.output_tokens for c in attempt_hooks.calls))

    async def _attempts(self, attempt_hooks: _Attempt, response_model: type[Any],
                        messages: Messages | Callable[[], Messages], context: dict[str, Any] | None,
                        options: dict[str, Any]) -> tuple[Any, list[LLMCall]]:
        s, purpose = self.service, attempt_hooks.purpose
        attempts = s.transport_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                answer = await self.client.create(
                    response_model=response_model,
                    messages=cast(Any, messages() if callable(messages) else list(messages)),  # role/content dicts
                    max_retries=s.max_retries, context=context, strict=False, hooks=attempt_hooks.hooks, **options)
                return answer, attempt_hooks.calls
            except Exception as exc:  # noqa: BLE001 - every failure is classified below
                failure = self.classify(exc)
            if isinstance(failure, Transient) and attempt < attempts:
                delay = self.delay(attempt, failure.retry_after)
                log.warning("%s %s:%s attempt %d/%d: %s; retrying in %.2fs", purpose, self.backend, self.model,
                            attempt, attempts, failure.reason, delay)
                await asyncio.sleep(delay)
                continue
            reason = failure.reason if isinstance(failure, Transient) else failure
            raise LLMFailed(reason, attempts=attempt_hooks.requests, calls=attempt_hooks.calls) from None
        raise AssertionError("unreachable")

    def ask_blocking(self, *args: Any, **kwargs: Any) -> tuple[Any, list[LLMCall]]:
        """`ask` from a worker thread, run on the event loop the client belongs to."""
        if self.loop is None:
            raise RuntimeError("the LLM transport has no event loop yet (create it inside one)")
        return asyncio.run_coroutine_threadsafe(self.ask(*args, **kwargs), self.loop).result()

    def classify(self, exc: BaseException) -> Transient | str:
        """A transient failure to retry, or the reason to give up, redacted."""
        import anthropic
        import openai
        from instructor.core.exceptions import IncompleteOutputException, InstructorRetryException

        cause = exc
        while isinstance(cause, InstructorRetryException) and cause.__cause__ is not None:
            cause = cause.__cause__
        s = self.service
        if isinstance(cause, (anthropic.APITimeoutError, openai.APITimeoutError)):
            return Transient(f"timed out after {s.timeout_s:g}s", None)
        if isinstance(cause, (anthropic.APIConnectionError, openai.APIConnectionError)):
            return Transient(self.redact(f"connection failed: {cause}"), None)
        if isinstance(cause, (anthropic.APIStatusError, openai.APIStatusError)):
            status = cause.status_code
            reason = self.redact(f"HTTP {status}: {_error_message(cause)}")
            if status in _TRANSIENT_STATUS or status >= 500:
                return Transient(reason, _retry_after(cause.response.headers))
            return reason
        if isinstance(cause, json.JSONDecodeError) and not getattr(exc, "failed_attempts", None):
            n = getattr(exc, "n_attempts", None) or 1  # instructor re-sends these like invalid answers
            return self.redact(f"the endpoint's response body was not JSON ({n} attempt(s)): {cause}")
        if isinstance(cause, IncompleteOutputException):
            return f"the answer was cut off at max_tokens={s.max_tokens}"
        if isinstance(cause, ValidationError) or (
            isinstance(exc, InstructorRetryException) and isinstance(cause, ValueError)
        ):
            n = getattr(exc, "n_attempts", None) or s.max_retries + 1
            return self.redact(f"the answer did not validate after {n} attempt(s): {_first_error(cause)}")
        return self.redact(f"{type(cause).__name__}: {cause}")

    def delay(self, attempt: int, retry_after: float | None) -> float:
        s = self.service
        if retry_after is not None:
            return min(max(retry_after, 0.0), s.backoff_max_s)
        return min(s.backoff_initial_s * 2 ** (attempt - 1), s.backoff_max_s) * random.uniform(0.5, 1.0)

    def redact(self, text: str) -> str:
        secret = self._key.get_secret_value() if self._key else ""
        if len(secret) >= 8:  # a toy key like "x" would mangle every word
            text = text.replace(secret, "[redacted]")
        return _KEYLIKE.sub("[redacted]", text)[:500]

    async def aclose(self) -> None:
        await self.sdk.close()


def _error_message(exc: anthropic.APIStatusError | openai.APIStatusError) -> str:
    body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
    error: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else body
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
        if not errors:
            return f"{exc.error_count()} error(s)"
        where = ".".join(str(p) for p in errors[0]["loc"])
        return f"{exc.error_count()} error(s), first at {where or 'root'}: {errors[0]['msg']}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


# -- which service -------------------------------------------------------------------------------

def service_for(settings: Settings, name: str | None = None) -> tuple[str, LLMService, SecretStr | None] | None:
    """The service `name` (default: `[memory.indexing] backend`) resolves to, or None for "offline"
    and for "auto" without ANTHROPIC_API_KEY. "auto": the first anthropic service of [llm.services]
    (else the defaults) with the key from the environment. An unknown name is an error."""
    backend, services = name or settings.memory.indexing.backend, settings.llm.services
    if backend == "offline":
        return None
    if backend == "auto":
        key = api_key_from_env("anthropic")
        if key is None:
            return None
        found, service = next(((n, s) for n, s in services.items() if s.provider == "anthropic"),
                              ("anthropic", LLMService()))
        return found, service, key
    if backend not in services:
        known = ", ".join(sorted(services)) or "none configured"
        raise ValueError(
            f"memory.indexing.backend = {backend!r} is not 'offline', 'auto' or a service in [llm.services] ({known})")
    return backend, services[backend], None


def llm_configured(settings: Settings) -> bool:
    """Whether `[memory.indexing] backend` resolves to an LLM service (by `service_for`'s rule)."""
    try:
        return service_for(settings) is not None
    except ValueError:  # an unknown service name: reported when extraction asks for it
        return False


def transport_for(settings: Settings, name: str | None = None) -> LLMTransport | None:
    found = service_for(settings, name)
    return LLMTransport(found[0], found[1], api_key=found[2]) if found else None


__all__ = ["LLMCall", "LLMFailed", "LLMTransport", "Transient", "UsageMeter", "add_usage", "llm_configured", "metering",
           "service_for", "transport_for"]
