"""The LLM hooks (predicate contradiction, correction AUDN, cluster labels) against the local fake
LLM API, on the real Neo4j: wired by AsyncMemory when an LLM backend is configured, deterministic
offline and when the call fails."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from kg import AsyncMemory
from kg.core.settings.tree import Settings
from kg.ingest.llm_judges import LLMClusterLabeler, LLMCorrectionJudge, LLMPredicateResolver
from tests.cypher_state import cypher_rows
from tests.fake_llm import FakeLLM, Reply, SeenRequest, estimate_tokens, fake_llm, recording

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
KEY = "sk-ant-api03-TESTKEY-never-log-me-0123456789"


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def llm_settings(fake: FakeLLM) -> Settings:
    service = {"provider": "anthropic", "model": "claude-haiku-4-5", "base_url": fake.url, "api_key": KEY,
               "timeout_s": 5.0, "max_retries": 1, "transport_retries": 1, "backoff_initial_s": 0.01,
               "backoff_max_s": 0.05}
    return Settings(llm={"services": {"fake": service}}, memory={"indexing": {"backend": "fake"}})


def tool_use(name: str, answer: dict[str, Any]) -> Any:
    def reply(request: SeenRequest) -> Reply:
        return Reply(body={
            "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "tool_use", "id": "toolu_fake", "name": name, "input": answer}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": estimate_tokens(request.text()),
                      "output_tokens": estimate_tokens(json.dumps(answer))}})
    return reply


async def current(m: AsyncMemory, namespace: str) -> list[str]:
    return sorted(f.object_value for f in await m.facts(namespace, "Dana", "favorite_editor"))


# -- wiring ------------------------------------------------------------------------------------

@pytest.mark.neo4j
async def test_hooks_are_set_only_when_an_llm_is_configured(fake_llm: FakeLLM) -> None:
    async with AsyncMemory(llm_settings(fake_llm)) as memory:
        assert isinstance(memory.predicate_resolver, LLMPredicateResolver)
        assert isinstance(memory.correction_judge, LLMCorrectionJudge)
        assert isinstance(memory.correction_labeler, LLMClusterLabeler)
        assert memory.correction_judge.name == "fake:claude-haiku-4-5:correction-audn-v1"
    assert memory.predicate_resolver is None and memory.correction_judge is None
    async with AsyncMemory(Settings(memory={"indexing": {"backend": "offline"}})) as offline:
        assert (offline.predicate_resolver, offline.correction_judge, offline.correction_labeler) == (None, None, None)


# -- facts: predicate-contradiction-v1 ----------------------------------------------------------

async def test_llm_contradiction_supersedes_an_unknown_predicate(fake_llm: FakeLLM, namespace: str) -> None:
    async with AsyncMemory(llm_settings(fake_llm)) as memory:
        await memory.remember(namespace, "Dana", "favorite_editor", "vim", valid_from=day(1))
        assert fake_llm.count() == 0  # nothing current to contradict: no call
        fake_llm.script(tool_use("Contradiction", {"contradicts": True, "reason": "one favorite at a time"}))
        result = await memory.remember(namespace, "Dana", "favorite_editor", "emacs", valid_from=day(2))
        assert fake_llm.count() == 1 and fake_llm.remaining() == 0
        prompt = fake_llm.requests[0].text()
        assert "favorite_editor" in prompt and "vim" in prompt and "emacs" in prompt
        assert result.decision == "superseded" and len(result.expired_ids) == 1
        assert await current(memory, namespace) == ["emacs"]
        [event] = await cypher_rows(memory, """
            MATCH (e:FactEvent {namespace: $ns, object_value: 'emacs'}) RETURN e.cardinality_by AS by""",
            ns=namespace)
        assert event["by"] == "fake:claude-haiku-4-5:predicate-contradiction-v1"
        [link] = await cypher_rows(memory, """
            MATCH (n:Fact {namespace: $ns, object_value: 'emacs'})-[:SUPERSEDES]->(o:Fact)
            RETURN o.object_value AS old""", ns=namespace)
        assert link["old"] == "vim"


async def test_llm_no_contradiction_keeps_both(fake_llm: FakeLLM, namespace: str) -> None:
    async with AsyncMemory(llm_settings(fake_llm)) as memory:
        await memory.remember(namespace, "Dana", "favorite_editor", "vim", valid_from=day(1))
        fake_llm.script(tool_use("Contradiction", {"contradicts": False, "reason": "both can hold"}))
        await memory.remember(namespace, "Dana", "favorite_editor", "emacs", valid_from=day(2))
        assert fake_llm.count() == 1
        assert await current(memory, namespace) == ["emacs", "vim"]


async def test_llm_failure_keeps_the_write_multi_valued(fake_llm: FakeLLM, namespace: str,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    async with AsyncMemory(llm_settings(fake_llm)) as memory:
        await memory.remember(namespace, "Dana", "favorite_editor", "vim", valid_from=day(1))
        fake_llm.script(*[recording("anthropic/error_500_api_error")] * 2)
        with caplog.at_level(logging.WARNING):
            result = await memory.remember(namespace, "Dana", "favorite_editor", "emacs", valid_from=day(2))
        assert result.decision != "superseded" and await current(memory, namespace) == ["emacs", "vim"]
        assert "predicate-contradiction-v1" in caplog.text and KEY not in caplog.text


async def test_no_llm_keeps_both(memory: AsyncMemory, namespace: str) -> None:
    assert memory.predicate_resolver is None
    await memory.remember(namespace, "Dana", "favorite_editor", "vim", valid_from=day(1))
    await memory.remember(namespace, "Dana", "favorite_editor", "emacs", valid_from=day(2))
    assert await current(memory, namespace) == ["emacs", "vim"]


# -- corrections: correction-audn-v1 -------------------------------------------------------------

async def test_llm_judge_invalidates_a_contradicted_neighbour(fake_llm: FakeLLM, namespace: str) -> None:
    async with AsyncMemory(llm_settings(fake_llm)) as memory:
        old = await memory.add_correction(namespace, "s1", "Write replies in British English.", seen_at=day(1))
        assert old.decided_by == "policy" and fake_llm.count() == 0  # no neighbours: no call
        fake_llm.script(tool_use("AUDNVerdict", {"action": "invalidate", "invalidate": [
            {"neighbour": 1, "link": "contradicts"}], "reason": "opposite spelling"}))
        new = await memory.add_correction(namespace, "s2", "Write replies in American English.", seen_at=day(2))
        assert fake_llm.count() == 1 and "British English" in fake_llm.requests[0].text()
        assert new.decision == "invalidated" and new.invalidated_ids == [old.correction_id]
        assert new.decided_by == "fake:claude-haiku-4-5:correction-audn-v1"
        [link] = await cypher_rows(memory, """
            MATCH (n:Correction {id: $new})-[l:LINK]->(o:Correction {id: $old})
            RETURN l.type AS type, o.invalidated_reason AS reason, o.invalidated_by AS by, n.decided_by AS decided""",
            new=new.correction_id, old=old.correction_id)
        assert (link["type"], link["reason"], link["by"]) == ("contradicts", "contradicted", new.correction_id)
        assert link["decided"] == "fake:claude-haiku-4-5:correction-audn-v1"
        assert [c.rule_text for c in await memory.corrections(namespace)] == ["Write replies in American English."]


async def test_llm_judge_failure_falls_back_to_the_policy(fake_llm: FakeLLM, namespace: str,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    async with AsyncMemory(llm_settings(fake_llm)) as memory:
        await memory.add_correction(namespace, "s1", "Write replies in British English.", seen_at=day(1))
        fake_llm.script(*[recording("anthropic/error_500_api_error")] * 2)
        with caplog.at_level(logging.WARNING):
            new = await memory.add_correction(namespace, "s2", "Write replies in American English.", seen_at=day(2))
        assert new.decided_by == "policy" and new.decision in ("added", "reinforced", "invalidated")
        assert "correction-audn-v1" in caplog.text and KEY not in caplog.text


# -- clusters: cluster-label-v1 -----------------------------------------------------------------

async def test_llm_labels_clusters(fake_llm: FakeLLM, namespace: str) -> None:
    settings = llm_settings(fake_llm)
    settings.memory.corrections.duplicate_similarity = 0.99  # keep the paraphrases apart until clustering
    texts = ["Use uv instead of pip.", "Prefer uv over pip.", "Please use uv rather than pip.",
             "Always install packages with uv, not pip.", "Use uv, never pip, for installs."]
    async with AsyncMemory(settings) as memory:
        memory.correction_judge = None  # AUDN by the policy here: only labels are asked
        for n, text in enumerate(texts):
            await memory.add_correction(namespace, f"s{n}", text, seen_at=day(n))
        fake_llm.fallback = tool_use("ClusterLabel", {"label": "Package installs with uv"})
        report = await memory.maintain_corrections(namespace, now=day(len(texts)))
        assert report.clusters, "the paraphrases form a cluster"
        assert {c.label for c in report.clusters} == {"Package installs with uv"}
        assert fake_llm.count() == len(report.clusters)
        stored = await cypher_rows(memory, "MATCH (k:CorrectionCluster {namespace: $ns}) RETURN k.label AS label",
                                   ns=namespace)
        assert {r["label"] for r in stored} == {"Package installs with uv"}
        fake_llm.fallback = recording("anthropic/error_500_api_error")
        again = await memory.maintain_corrections(namespace, now=day(len(texts)))
        assert all(c.label == " / ".join(c.keyphrases) for c in again.clusters)  # keyphrases on failure
