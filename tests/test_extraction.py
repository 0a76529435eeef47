"""Post-session extraction without an LLM: models, prompts, chunking and the offline extractor.
The LLM backends are in test_extraction_llm.py."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from kg.core.prompts.extraction import (
    EXTRACT,
    EXTRACT_V1,
    QUOTE_MAX_CHARS,
    ChunkInput,
    ChunkTurn,
    ExtractedCorrection,
    ExtractedEntity,
    ExtractedFact,
    ExtractionResult,
    extract_v1,
)
from kg.core.prompts.registry import PROMPTS, prompt, versions
from kg.core.settings.memory import IndexingSettings
from kg.ingest.extraction.chunking import chunks_for, estimate_tokens, plan_chunks, turn_tokens
from kg.ingest.extraction.extractor import Extractor, Usage
from kg.ingest.extraction.merging import merge
from kg.ingest.extraction.offline import OfflineExtractor, extract_offline
from tests.extraction_samples import T0, chunk, turns

# --- models and prompts ------------------------------------------------------------------

def test_models_reject_nonsense(chunk: ChunkInput) -> None:
    ctx = chunk.validation_context()
    fact = {"subject": "Dana", "predicate": "Lives In", "object": "Lisbon", "evidence_turn_ids": ["t1"]}
    assert ExtractedFact.model_validate(fact, context=ctx).predicate == "lives_in"
    with pytest.raises(ValidationError, match="not in this chunk"):
        ExtractedFact.model_validate({**fact, "evidence_turn_ids": ["t99"]}, context=ctx)
    assert ExtractedFact.model_validate({**fact, "evidence_turn_ids": ["t99"]}).evidence_turn_ids == ["t99"]
    with pytest.raises(ValidationError, match="quote"):
        ExtractedFact.model_validate({**fact, "quote": "x" * (QUOTE_MAX_CHARS + 1)})
    with pytest.raises(ValidationError, match="snake_case"):
        ExtractedFact.model_validate({**fact, "predicate": "lives in (maybe)?"})
    with pytest.raises(ValidationError, match="must not be empty"):
        ExtractedEntity.model_validate({"name": " \n", "evidence_turn_ids": ["t1"]})
    with pytest.raises(ValidationError):
        ExtractedEntity.model_validate({"name": "Dana", "evidence_turn_ids": []})
    entity = ExtractedEntity.model_validate({"name": "Order 7", "type": "order", "attributes": {"n": 7}, "evidence_turn_ids": ["t1"]})
    assert entity.attributes == {"n": "7"}
    with pytest.raises(ValidationError):
        ExtractedCorrection.model_validate({"original_behavior": "a", "corrected_behavior": "b", "rule_text": "c",
                                            "correction_type": "vibes", "evidence_turn_ids": ["t1"]})
    naive = ExtractedFact.model_validate({**fact, "valid_from": "2024-05-01T09:00:00"})
    assert naive.valid_from == T0
    as_tuple = ChunkTurn.model_validate(("t1", 0, "user", "Dana", "hi", "2024-05-01T09:00:00Z"))
    assert as_tuple.ts == T0 and as_tuple.speaker == "Dana"


def test_prompt_v1_is_pure_and_shows_ids_speakers_times(chunk: ChunkInput) -> None:
    messages = extract_v1(chunk)
    assert messages == extract_v1(chunk)
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert '<turn id="t3" role="user" speaker="Dana" ts="2024-05-01T09:01:10+00:00">' in user
    assert "No, use uv instead of pip." in user
    assert PROMPTS["extract"] is EXTRACT is prompt("extract") and EXTRACT.response_model is ExtractionResult
    assert versions()["extract"] == EXTRACT_V1
    split = chunk.model_copy(update={"chunk_index": 1, "chunk_count": 3})
    assert "part 2 of 3" in extract_v1(split)[1]["content"]


def test_the_registry_holds_every_prompt_once_by_its_name() -> None:
    assert len(PROMPTS) == 12 and len(set(versions().values())) == 12
    assert all(v == f"{name}-v1" for name, v in versions().items())
    assert {p.purpose for p in PROMPTS.values()} >= {"extraction", "session", "signals", "quality", "rerank"}
    assert all(prompt(p.version) is p for p in PROMPTS.values())  # a stored version finds its prompt
    with pytest.raises(KeyError, match="known: adjudicate"):
        prompt("summarise")


def test_callers_get_their_prompt_from_the_registry() -> None:
    """The prompts live in the foundation (`kg.core.prompts`), for the write and the read path alike;
    no caller outside it imports a prompt (a `Prompt` constant or its version string)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    constants = {n for p in PROMPTS.values() for n in (p.version.replace("-", "_").upper(),
                                                      p.version.rsplit("-v", 1)[0].replace("-", "_").upper())}
    found = []
    for folder in ("kg", "ingest", "queries", "bench"):
        for path in (root / folder).rglob("*.py"):
            if "prompts" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kg.core.prompts"):
                    found += [f"{path.relative_to(root)}: {a.name}" for a in node.names if a.name in constants]
    assert found == []


# --- chunking ------------------------------------------------------------------------------

def test_session_that_fits_is_one_chunk() -> None:
    session = turns(20)
    chunks = plan_chunks("s", session, token_budget=6000, overlap=0.15)
    assert len(chunks) == 1 and [t.id for t in chunks[0].turns] == [t.id for t in session]
    assert chunks[0].chunk_count == 1


def test_long_session_splits_on_turn_boundaries_with_overlap() -> None:
    session = turns(120)
    budget, overlap = 1000, 0.15
    chunks = plan_chunks("s", reversed(session), token_budget=budget, overlap=overlap, namespace="n")
    assert len(chunks) > 1 and all(c.chunk_count == len(chunks) and c.namespace == "n" for c in chunks)
    seen: list[str] = []
    for before, after in zip(chunks, chunks[1:]):
        shared = [t for t in after.turns if t.id in before.turn_ids()]
        assert shared and shared == before.turns[-len(shared):]  # a suffix of the previous chunk
        shared_tokens = sum(turn_tokens(t) for t in shared)
        assert 0 < shared_tokens <= overlap * budget
    for c in chunks:
        assert sum(turn_tokens(t) for t in c.turns) <= budget
        assert [t.idx for t in c.turns] == list(range(c.turns[0].idx, c.turns[-1].idx + 1))
        seen += [t.id for t in c.turns if t.id not in seen]
    assert seen == [t.id for t in session]


def test_oversized_turn_is_cut_and_settings_drive_chunking() -> None:
    huge = ChunkTurn(id="big", idx=0, text="x" * 100_000)
    (only,) = plan_chunks("s", [huge], token_budget=500, overlap=0.15)
    assert turn_tokens(only.turns[0]) <= 500 and only.turns[0].text.endswith("[truncated for extraction]")
    settings = IndexingSettings(chunk_token_budget=400, chunk_overlap=0.2)
    assert len(chunks_for(settings, "s", turns(40))) > 1
    assert estimate_tokens("abcd" * 10) == 10


def test_merge_counts_the_same_item_once() -> None:
    def result(ids: list[str], name: str, rule: str) -> ExtractionResult:
        return ExtractionResult.model_validate({
            "entities": [{"name": name, "type": "other", "evidence_turn_ids": ids},
                         {"name": "ACME Robotics", "type": "organization", "aliases": ["Acme"], "evidence_turn_ids": ids}],
            "facts": [{"subject": "Dana", "predicate": "lives_in", "object": name, "evidence_turn_ids": ids}],
            "corrections": [{"original_behavior": "pip", "corrected_behavior": "uv", "rule_text": rule,
                             "correction_type": "tool_usage", "evidence_turn_ids": ids}],
        })
    merged = merge([
        result(["t1"], "Lisbon", "Use uv instead of pip."),
        result(["t2"], "lisbon ", "use uv instead of pip"),
        ExtractionResult.model_validate({"entities": [{"name": "acme", "type": "other", "evidence_turn_ids": ["t3"]},
                                                      {"name": "Porto", "type": "place", "evidence_turn_ids": ["t3"]}]}),
    ])
    assert [e.name for e in merged.entities] == ["Lisbon", "ACME Robotics", "Porto"]
    assert merged.entities[0].evidence_turn_ids == ["t1", "t2"]
    assert merged.entities[1].evidence_turn_ids == ["t1", "t2", "t3"] and merged.entities[1].type == "organization"
    assert len(merged.facts) == 1 and merged.facts[0].evidence_turn_ids == ["t1", "t2"]
    assert len(merged.corrections) == 1


# --- offline extractor ---------------------------------------------------------------------

async def test_offline_extractor_on_sample_conversation(chunk: ChunkInput) -> None:
    extra = [
        ChunkTurn(id="t7", idx=6, role="assistant", speaker="Assistant", text="I live in the cloud, and I love JSON.", ts=T0),
        ChunkTurn(id="t8", idx=7, role="user", speaker="Dana", ts=T0 + timedelta(hours=1),
                  text="Actually, I no longer work at Acme Robotics. I prefer short answers. Don't use bullet points, write prose instead."),
    ]
    chunk = chunk.model_copy(update={"turns": [*chunk.turns, *extra]})
    extractor = OfflineExtractor()
    assert isinstance(extractor, Extractor)
    result, usage = await extractor.extract(chunk)
    assert usage == Usage()
    facts = {(f.subject, f.predicate, f.object, f.retracts): f for f in result.facts}
    moved = facts[("Dana", "lives_in", "Lisbon", False)]
    assert moved.valid_from == T0 and moved.evidence_turn_ids == ["t1"]
    assert ("Dana", "works_at", "Acme Robotics", False) in facts
    assert ("Dana", "email", "dana@example.com", False) in facts
    assert ("Dana", "prefers", "short answers", False) in facts
    retracted = facts[("Dana", "works_at", "Acme Robotics", True)]
    assert retracted.valid_from == T0 + timedelta(hours=1)
    assert not any(f.subject == "Assistant" for f in result.facts)  # first person only from the user
    entities = {e.name: e for e in result.entities}
    assert entities["Lisbon"].type == "place" and entities["Acme Robotics"].type == "organization"
    assert entities["Order A-88231"].type == "order" and entities["Anna"].type == "person"
    assert entities["dana@example.com"].attributes == {"kind": "email"}
    assert "Let's" not in entities and "Hi" not in entities
    rules = {c.rule_text: c for c in result.corrections}
    assert rules["Use uv instead of pip."].correction_type == "tool_usage"
    assert rules["Do not use bullet points; write prose instead."].correction_type == "style"
    assert any(c.correction_type == "factual" for c in result.corrections)
    assert [d.text for d in result.decisions] == ["Let's go with the refund"]
    assert result == extract_offline(chunk)  # deterministic


def test_offline_over_overlapping_chunks_merges_to_the_whole() -> None:
    lines = ["I moved to Porto.", "Noted.", "I work at Lumen Store.", "Great.", "My favorite color is teal."] * 12
    session = [ChunkTurn(id=f"t{i}", idx=i, role="user" if i % 2 == 0 else "assistant", speaker="Dana", text=text, ts=T0)
               for i, text in enumerate(lines)]
    chunks = plan_chunks("s", session, token_budget=300, overlap=0.15)
    assert len(chunks) > 2
    merged = merge([extract_offline(c) for c in chunks])
    whole = extract_offline(ChunkInput(session_id="s", turns=session))
    assert {(f.predicate, f.object) for f in merged.facts} == {(f.predicate, f.object) for f in whole.facts}
    assert len(merged.facts) == len(whole.facts) == 3
    assert merged.facts[0].evidence_turn_ids == whole.facts[0].evidence_turn_ids


def test_offline_skips_a_name_too_long_to_be_one() -> None:
    """A 260-character URL (a paper's tracking link, seen in LongMemEval) is no entity name: the
    offline reader leaves it out instead of failing the whole session's summary."""
    url = "https://pdfs.example.org/paper.pdf?" + "x" * 230
    short = "https://example.org/a"
    session = [ChunkTurn(id="t0", idx=0, role="assistant", speaker=None, text=f"See {url} and {short}.", ts=T0)]
    found = extract_offline(ChunkInput(session_id="s", turns=session))
    assert [e.name for e in found.entities] == [short]
