"""The LLM behind three write-time hooks, through the same instructor backends as extraction.

- `LLMPredicateResolver` (`predicate-contradiction-v1`): for a predicate neither the defaults nor
  `[memory.predicates]` know, does the new value contradict a current one? Yes: the predicate is
  functional for this write (the old value is superseded); otherwise it stays multi-valued.
- `LLMCorrectionJudge` (`correction-audn-v1`): ADD / UPDATE (reinforce) / DELETE (invalidate) /
  NOOP for an incoming correction against its neighbours, as a `Verdict`.
- `LLMClusterLabeler` (`cluster-label-v1`): a short name for a cluster of corrections.

Each asks its versioned prompt (`kg.core.prompts.judges`, from the registry) through `kg.core.llm.asker.LLMAsker`:
the one transport with its retries, redaction and usage meter. Any failure logs a warning (no keys:
reasons are redacted) and returns None, so the deterministic behaviour decides and no write is lost.
`llm_hooks(settings)` makes all three when `[memory.indexing] backend` resolves to an LLM service, by
the rule `extractor_for` uses; offline leaves them None. They share one client.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from kg.core.llm.asker import LLMAsker, Prompt
from kg.core.llm.transport import LLMTransport, service_for
from kg.core.prompts import registry
from kg.core.settings.tree import Settings

from .corrections.policy import Candidate, Neighbour, Verdict
from .temporal import Cardinality

log = logging.getLogger(__name__)


class _Judge(LLMAsker):
    """An asker on the hooks' shared client: the last one closed closes it."""

    def __init__(self, shared: _SharedTransport, prompt: Prompt) -> None:
        super().__init__(shared.use(), prompt, shared=True)
        self._owner = shared

    async def aclose(self) -> None:
        await self._owner.release()


class LLMPredicateResolver(_Judge):
    """`PredicateResolver`: "one" for this write when the new value contradicts a current one."""

    def __init__(self, shared: _SharedTransport) -> None:
        super().__init__(shared, registry.prompt("predicate-contradiction"))

    async def cardinality(self, namespace: str, predicate: str, *, subject: str = "", new_value: str = "",
                          current_values: Sequence[str] = ()) -> Cardinality | None:
        others = [v for v in dict.fromkeys(current_values) if v.casefold() != new_value.casefold()]
        if not others or not new_value:
            return None  # nothing it could contradict
        answer = await self.ask(subject, predicate, new_value, others)
        return "one" if answer is not None and answer.contradicts else None


class LLMCorrectionJudge(_Judge):
    """`CorrectionJudge`: AUDN by the LLM; None (the policy decides) without neighbours or on failure."""

    def __init__(self, shared: _SharedTransport) -> None:
        super().__init__(shared, registry.prompt("correction-audn"))

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


class LLMClusterLabeler(_Judge):
    """`ClusterLabeler`: the LLM's label; None (keyphrases) on failure or a blank answer."""

    def __init__(self, shared: _SharedTransport) -> None:
        super().__init__(shared, registry.prompt("cluster-label"))

    async def label(self, rule_texts: Sequence[str]) -> str | None:
        answer = await self.ask(list(rule_texts)[:20], max_tokens=128)
        text = " ".join(answer.label.split()).strip(" .\"'") if answer is not None else ""
        return text[:80] or None


# -- wiring --------------------------------------------------------------------------------------

@dataclass
class LLMHooks:
    """The write-time hooks `llm_hooks` made (None: not wanted, or no LLM), and the list to close."""

    predicate_resolver: LLMPredicateResolver | None = None
    correction_judge: LLMCorrectionJudge | None = None
    correction_labeler: LLMClusterLabeler | None = None
    made: list[_Judge] = field(default_factory=list)


def llm_hooks(settings: Settings, resolver: bool = True, judge: bool = True, labeler: bool = True) -> LLMHooks:
    """The wanted hooks on the service `[memory.indexing] backend` resolves to, sharing one client;
    none when extraction is offline or the key is missing (the deterministic behaviour decides)."""
    hooks = LLMHooks()
    try:
        found = service_for(settings)
    except ValueError:  # an unknown service name: reported when extraction asks for it
        return hooks
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
        hooks.predicate_resolver = LLMPredicateResolver(shared)
        hooks.made.append(hooks.predicate_resolver)
    if judge:
        hooks.correction_judge = LLMCorrectionJudge(shared)
        hooks.made.append(hooks.correction_judge)
    if labeler:
        hooks.correction_labeler = LLMClusterLabeler(shared)
        hooks.made.append(hooks.correction_labeler)
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
