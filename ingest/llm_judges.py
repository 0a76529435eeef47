"""The LLM behind three write-time hooks, through the same instructor backends as extraction.

- `LLMPredicateResolver` (`predicate-contradiction-v1`): for a predicate neither the defaults nor
  `[memory.predicates]` know, does the new value contradict a current one? Yes: the predicate is
  functional for this write (the old value is superseded); otherwise it stays multi-valued.
- `LLMCorrectionJudge` (`correction-audn-v1`): ADD / UPDATE (reinforce) / DELETE (invalidate) /
  NOOP for an incoming correction against its neighbours, as a `Verdict`.
- `LLMClusterLabeler` (`cluster-label-v1`): a short name for a cluster of corrections.

Each is a small versioned prompt paired with its response model, asked through `LLMExtractor`'s
client with its transport retries and redaction. Any failure logs a warning (no keys: reasons are
redacted) and returns None, so the deterministic behaviour decides and no write is lost.
`llm_hooks(settings)` makes all three when `[memory.indexing] backend` resolves to an LLM service, by
the rule `extractor_for` uses; offline leaves them None.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr

from kg.ingest.corrections.policy import Candidate, Neighbour, Verdict
from kg.ingest.extraction.extractor import Usage
from kg.ingest.extraction.llm import LLMExtractor, usage_of
from kg.ingest.temporal import Cardinality
from kg.core.config import LLMService, Settings
from kg.core.llm import LLMFailed, LLMTransport
from kg.core.llm import service_for as _service_for

log = logging.getLogger(__name__)

PREDICATE_CONTRADICTION_V1 = "predicate-contradiction-v1"
CORRECTION_AUDN_V1 = "correction-audn-v1"
CLUSTER_LABEL_V1 = "cluster-label-v1"
Messages = list[dict[str, str]]


@dataclass(frozen=True)
class JudgePrompt:
    version: str
    build: Callable[..., Messages]
    response_model: type[BaseModel]


# -- predicate-contradiction-v1 ------------------------------------------------------------------

class Contradiction(BaseModel):
    """Whether the new value contradicts (replaces) a value currently believed."""

    contradicts: bool = Field(description="True when the new value and a current value cannot both hold now.")
    reason: str = Field("", description="One short sentence.")


_CONTRADICTION_SYSTEM_V1 = """\
You maintain the long-term memory of an AI assistant as subject / predicate / object facts. A new \
fact arrives for a predicate whose cardinality is unknown. Decide whether the new value contradicts \
one of the values currently believed, i.e. the subject can have only one of them at a time (a \
favorite, a current employer, a home city), so the new value replaces the old one. Values that \
can hold together (languages spoken, hobbies, things owned) do not contradict. Say false when unsure."""


def predicate_contradiction_v1(subject: str, predicate: str, new_value: str, current: Sequence[str]) -> Messages:
    lines = [f"Subject: {subject}", f"Predicate: {predicate}", "Currently believed values:"]
    lines += [f"- {v}" for v in current]
    lines += [f"New value: {new_value}", "", "Does the new value contradict a currently believed value?"]
    return [{"role": "system", "content": _CONTRADICTION_SYSTEM_V1}, {"role": "user", "content": "\n".join(lines)}]


PREDICATE_CONTRADICTION = JudgePrompt(PREDICATE_CONTRADICTION_V1, predicate_contradiction_v1, Contradiction)


# -- correction-audn-v1 --------------------------------------------------------------------------

class Invalidation(BaseModel):
    neighbour: int = Field(description="Number of the existing correction the new one invalidates.")
    link: Literal["contradicts", "supersedes"] = Field(
        description="contradicts: they conflict; supersedes: the new one is a refined replacement.")


class AUDNVerdict(BaseModel):
    """ADD / UPDATE / DELETE / NOOP for a new correction, against numbered existing ones."""

    action: Literal["add", "reinforce", "invalidate", "noop"] = Field(
        description="add: new rule; reinforce: restates an existing one (UPDATE); invalidate: the new "
                    "rule replaces the ones in `invalidate` (DELETE); noop: nothing new.")
    target: int | None = Field(None, description="For reinforce/noop: the number of the existing correction.")
    invalidate: list[Invalidation] = Field(default_factory=list, description="Existing corrections it invalidates.")
    reason: str = Field("", description="One short sentence.")


_AUDN_SYSTEM_V1 = """\
You maintain the rules an AI assistant learned from its user's corrections. A new correction \
arrives; numbered existing corrections are similar to it. Decide:
- reinforce (UPDATE): it restates existing correction `target`;
- noop: it adds nothing to existing correction `target`;
- invalidate (DELETE): it contradicts or supersedes the existing corrections listed in \
`invalidate`; the new one is stored and they stop applying;
- add: it is a new rule (it may still list corrections it invalidates).
Only use the numbers shown. Prefer add when unsure."""


def correction_audn_v1(candidate: Candidate, neighbours: Sequence[Neighbour]) -> Messages:
    lines = [f'New correction ({candidate.correction_type}): "{candidate.rule_text}"', "", "Existing corrections:"]
    lines += [f'{i}. "{n.rule_text}" (similarity {n.similarity:.2f}, reinforced {n.reinforcement_count}x)'
              for i, n in enumerate(neighbours, 1)]
    lines += ["", "What should happen to the new correction?"]
    return [{"role": "system", "content": _AUDN_SYSTEM_V1}, {"role": "user", "content": "\n".join(lines)}]


CORRECTION_AUDN = JudgePrompt(CORRECTION_AUDN_V1, correction_audn_v1, AUDNVerdict)


# -- cluster-label-v1 ----------------------------------------------------------------------------

class ClusterLabel(BaseModel):
    label: str = Field(description="A short name (2 to 6 words) for what the rules have in common.")


_LABEL_SYSTEM_V1 = """\
You name groups of rules an AI assistant learned from its user's corrections. Give a short label \
(2 to 6 words, no quotes, no trailing period) saying what the rules of the group have in common."""


def cluster_label_v1(rule_texts: Sequence[str]) -> Messages:
    user = "Rules:\n" + "\n".join(f"- {t}" for t in rule_texts) + "\n\nName this group."
    return [{"role": "system", "content": _LABEL_SYSTEM_V1}, {"role": "user", "content": user}]


CLUSTER_LABEL = JudgePrompt(CLUSTER_LABEL_V1, cluster_label_v1, ClusterLabel)


# -- the shared client ---------------------------------------------------------------------------

class LLMAsker(LLMExtractor):
    """One structured question through the LLM transport (retries, redaction, the usage meter)."""

    def __init__(self, name: str, service: LLMService, prompt: JudgePrompt, *, api_key: SecretStr | None = None,
                 transport: LLMTransport | None = None) -> None:
        super().__init__(name, service, api_key=api_key, transport=transport)
        self.judge_prompt = prompt
        self.prompt_version = prompt.version
        self.usage = Usage()  # answered calls and tokens, summed over this hook's life

    @property
    def name(self) -> str:
        return f"{self.backend}:{self.model}:{self.prompt_version}"

    async def ask(self, *args: Any, max_tokens: int = 512) -> Any | None:
        """The answer, or None (warning logged) when the call failed after its retries."""
        prompt = self.judge_prompt
        try:
            answer, calls = await self.transport.ask(prompt.version.rsplit("-v", 1)[0], prompt.version,
                                                     prompt.response_model, lambda: prompt.build(*args),
                                                     max_tokens=max_tokens)
        except LLMFailed as failed:
            self.usage = self.usage + usage_of(failed.calls)
            log.warning("%s by %s:%s failed (%s); the deterministic rule decides", self.prompt_version,
                        self.backend, self.model, failed.reason)
            return None
        self.usage = self.usage + usage_of(calls)
        return answer

    shared: "_SharedTransport | None" = None

    async def aclose(self) -> None:
        if self.shared is not None:
            await self.shared.release()
        else:
            await super().aclose()


class LLMPredicateResolver(LLMAsker):
    """`PredicateResolver`: "one" for this write when the new value contradicts a current one."""

    def __init__(self, name: str, service: LLMService, *, api_key: SecretStr | None = None,
                 transport: LLMTransport | None = None) -> None:
        super().__init__(name, service, PREDICATE_CONTRADICTION, api_key=api_key, transport=transport)

    async def cardinality(self, namespace: str, predicate: str, *, subject: str = "", new_value: str = "",
                          current_values: Sequence[str] = ()) -> Cardinality | None:
        others = [v for v in dict.fromkeys(current_values) if v.casefold() != new_value.casefold()]
        if not others or not new_value:
            return None  # nothing it could contradict
        answer = await self.ask(subject, predicate, new_value, others)
        return "one" if answer is not None and answer.contradicts else None


class LLMCorrectionJudge(LLMAsker):
    """`CorrectionJudge`: AUDN by the LLM; None (the policy decides) without neighbours or on failure."""

    def __init__(self, name: str, service: LLMService, *, api_key: SecretStr | None = None,
                 transport: LLMTransport | None = None) -> None:
        super().__init__(name, service, CORRECTION_AUDN, api_key=api_key, transport=transport)

    async def judge(self, candidate: Candidate, neighbours: Sequence[Neighbour]) -> Verdict | None:
        if not neighbours:
            return None  # nothing to compare with: the policy adds it
        shown = list(neighbours)
        answer = await self.ask(candidate, shown)
        if answer is None:
            return None

        def pick(number: int | None) -> str | None:
            return shown[number - 1].id if number is not None and 1 <= number <= len(shown) else None

        invalidate = [(pick(i.neighbour), i.link) for i in answer.invalidate]
        if any(i is None for i, _ in invalidate) or (answer.action in ("reinforce", "noop") and
                                                     pick(answer.target) is None):
            log.warning("%s named an unknown correction; the policy decides", self.prompt_version)
            return None
        return Verdict(answer.action, pick(answer.target),
                       tuple((i, link) for i, link in dict.fromkeys(invalidate) if i is not None))


class LLMClusterLabeler(LLMAsker):
    """`ClusterLabeler`: the LLM's label; None (keyphrases) on failure or a blank answer."""

    def __init__(self, name: str, service: LLMService, *, api_key: SecretStr | None = None,
                 transport: LLMTransport | None = None) -> None:
        super().__init__(name, service, CLUSTER_LABEL, api_key=api_key, transport=transport)

    async def label(self, rule_texts: Sequence[str]) -> str | None:
        answer = await self.ask(list(rule_texts)[:20], max_tokens=128)
        text = " ".join(answer.label.split()).strip(" .\"'") if answer is not None else ""
        return text[:80] or None


# -- wiring --------------------------------------------------------------------------------------

def service_for(settings: Settings) -> tuple[str, LLMService, SecretStr | None] | None:
    """The service `extractor_for` would use, or None when extraction is offline."""
    try:
        return _service_for(settings)
    except ValueError:
        return None


@dataclass
class LLMHooks:
    """The write-time hooks `llm_hooks` made (None: not wanted, or no LLM), and the list to close."""

    predicate_resolver: LLMPredicateResolver | None = None
    correction_judge: LLMCorrectionJudge | None = None
    correction_labeler: LLMClusterLabeler | None = None
    made: list[LLMAsker] = field(default_factory=list)


def llm_hooks(settings: Settings, resolver: bool = True, judge: bool = True, labeler: bool = True) -> LLMHooks:
    """The wanted hooks on the service `[memory.indexing] backend` resolves to, sharing one client;
    none when extraction is offline or the key is missing (the deterministic behaviour decides)."""
    hooks = LLMHooks()
    found = service_for(settings)
    if found is None or not (resolver or judge or labeler):
        return hooks
    name, service, key = found
    try:
        transport = LLMTransport(name, service, api_key=key)
    except ValueError as exc:  # no API key: the hooks stay deterministic
        log.warning("LLM hooks not installed: %s", exc)
        return hooks
    shared = _SharedTransport(transport)
    if resolver:
        hooks.predicate_resolver = LLMPredicateResolver(name, service, transport=shared.use())
        hooks.made.append(hooks.predicate_resolver)
    if judge:
        hooks.correction_judge = LLMCorrectionJudge(name, service, transport=shared.use())
        hooks.made.append(hooks.correction_judge)
    if labeler:
        hooks.correction_labeler = LLMClusterLabeler(name, service, transport=shared.use())
        hooks.made.append(hooks.correction_labeler)
    for hook in hooks.made:
        hook.shared = shared  # the last hook closed closes the client
    return hooks


class _SharedTransport:
    """One client for the hooks `install` made; closed when the last of them is."""

    def __init__(self, transport: LLMTransport) -> None:
        self.transport, self.users = transport, 0

    def use(self) -> LLMTransport:
        self.users += 1
        return self.transport

    async def release(self) -> None:
        self.users -= 1
        if self.users <= 0:
            await self.transport.aclose()
