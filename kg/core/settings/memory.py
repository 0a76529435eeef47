"""The `[memory]` section of the settings tree (`kg.core.settings.tree.Settings.memory`): indexing,
confidence, corrections, summaries, retrieval, the vector-search policy and value identity."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator

from kg.core.settings.base import Section
from kg.core.settings.dedup import DedupSettings  # [memory.entity_deduplication]; pure, no I/O
from kg.core.vocabulary import Cardinality, RecipeName, RerankerKind, ValueMatch


class IndexingSettings(Section):
    backend: str = "auto"  # a name in llm.services, "offline", or "auto"
    chunk_token_budget: int = Field(6000, ge=200)
    chunk_overlap: float = Field(0.15, ge=0, lt=0.5)
    max_failures: int = Field(5, ge=1)  # a session whose extraction failed this often is left to `kg index --session`
    # 1: the session call alone (at most 2 calls for a closed 100-turn session); 3: then the signals
    # (pass 2) and the quality (pass 3) of each closed session, 2 calls more (docs/extraction.md)
    passes: Literal[1, 3] = 1
    quality_service: str | None = None  # pass 3's service in [llm.services]; None: the backend's


class ConfidenceSettings(Section):
    """Fact confidence: base(source) x reinforcement boost x staleness; 0 once superseded or retracted."""

    base: dict[str, float] = Field(
        default_factory=lambda: {"stated": 1.0, "system": 0.9, "observed": 0.7, "inferred": 0.5})
    reinforcement_step: float = Field(0.1, ge=0)  # boost per reinforcement
    reinforcement_cap: float = Field(1.5, ge=1)  # the boost never exceeds this factor
    fresh_days: float = Field(30, ge=0)  # untouched for less than this: no staleness
    stale_days: float = Field(365, gt=0)  # untouched this long: the floor
    staleness_floor: float = Field(0.5, ge=0, le=1)

    @field_validator("stale_days")
    @classmethod
    def _after_fresh(cls, v: float, info: Any) -> float:
        if v <= info.data.get("fresh_days", 0):
            raise ValueError("stale_days must be greater than fresh_days")
        return v


class CorrectionClusteringSettings(Section):
    """The nightly batch: HDBSCAN over correction embeddings (UMAP first for large sets)."""

    min_cluster_size: int = Field(2, ge=2)
    min_samples: int = Field(1, ge=1)
    umap_min_points: int = Field(200, ge=10)  # at least this many corrections: reduce with UMAP first
    umap_components: int = Field(10, ge=2)
    link_similarity: float = Field(0.60, gt=0, le=1)  # a cluster splits into groups linked at this cosine
    merge_similarity: float = Field(0.70, gt=0, le=1)  # cosine inside one cluster that merges two corrections
    report_dir: Path = Path(".kg/reports")  # relative to the working folder


class CorrectionSettings(Section):
    """Corrections: AUDN on ingest, graduation correction -> pattern -> preference -> rule, decay.

    Similarities are cosine in [-1, 1] between embeddings of normalized rule texts. A weight is
    confidence x reinforcement_count^growth x 0.5^(days since last seen / half_life_days).
    """

    duplicate_similarity: float = Field(0.85, gt=0, le=1)  # at least: reinforce instead of add
    contradiction_similarity: float = Field(0.65, gt=0, le=1)  # at least: checked for contradiction
    related_similarity: float = Field(0.60, gt=0, le=1)  # at least (and not a duplicate): `related` link
    neighbours: int = Field(10, ge=1)  # nearest corrections the decision looks at
    confidence: dict[str, float] = Field(default_factory=lambda: {
        "preference": 0.6, "style": 0.6, "process": 0.6, "tool_usage": 0.6, "factual": 0.8})
    default_confidence: float = Field(0.6, gt=0, le=1)  # a correction_type not listed above
    half_life_days: dict[str, float] = Field(default_factory=dict)  # per correction_type
    default_half_life_days: float = Field(120, gt=0)
    confirmed_half_life_days: float = Field(365, gt=0)  # after Memory.confirm_rule
    growth: float = Field(0.5, ge=0)  # reinforcement_count exponent
    pattern_min_sessions: int = Field(2, ge=2)
    preference_min_sessions: int = Field(3, ge=2)
    preference_min_span_days: float = Field(1.0, ge=0)  # first to last seen: recurs over time, not in a burst
    rule_min_reinforcements: int = Field(5, ge=2)  # sessions; or an explicit confirmation
    pattern_min_weight: float = Field(0.25, ge=0)  # below: demoted one level (decay)
    preference_min_weight: float = Field(0.45, ge=0)
    rule_min_weight: float = Field(0.6, ge=0)
    core_preference_min_weight: float = Field(0.8, ge=0)  # preferences this strong join core_rules
    clustering: CorrectionClusteringSettings = Field(default_factory=CorrectionClusteringSettings)


class SummarySettings(Section):
    """Session summaries (`Memory.close_session`, `summarize_due`); the triggers are in [session]."""

    token_budget: int = Field(6000, ge=200)  # no summarizer call sees more (tokens of ~4 characters)
    # None: windows are cut by token_budget alone; a number also caps the turns of one window
    window_turns: int | None = Field(None, ge=2)
    rollup_fanout: int = Field(8, ge=2)  # at most this many summaries roll up into one meta summary
    central_turns: int = Field(4, ge=1)  # turns the offline (extractive) summary quotes
    keyphrases: int = Field(8, ge=1)  # topics the offline summary lists
    max_chars: int = Field(1500, ge=200)  # of one offline summary's text
    context_turns: int = Field(2, ge=0)  # neighbours either side in a turn's context key
    # the context key's vector: the turn's own plus each neighbour's times this (docs/retrieval.md)
    context_weight: float = Field(1.0, ge=0)


class RecallWeights(Section):
    """`Memory.recall`: score = similarity + graph relevance + fact confidence, weighted."""

    similarity: float = Field(1.0, ge=0)
    graph: float = Field(0.3, ge=0)  # closeness to the entities the query names
    confidence: float = Field(0.3, ge=0)  # facts; turns and summaries count as fully confident


class RerankSettings(Section):
    """`[memory.retrieval.rerank]`: the rerank stage of the configured strategy (`kg.queries.rerank`)."""

    reranker: RerankerKind = "none"
    top_n: int = Field(20, ge=2)  # turns of the final list (hierarchical) or fused list reordered
    # the fused order's weight beside the reranker's (1) over those turns (RRF); 0: the reranker's order alone
    keep_fused: float = Field(1.0, ge=0)
    # the `rerank` extra's int8 ONNX ms-marco-MiniLM-L-12-v2 (no torch, no download); or a folder holding
    # model.onnx and tokenizer.json; or any other folder or model name through sentence-transformers
    # (the `torch` extra; a name is fetched from the model hub on a machine that reaches it)
    cross_encoder_model: str = "ms-marco-MiniLM-L-12-v2-int8"
    device: str = "cpu"
    voyage_model: str = "rerank-2.5-lite"
    voyage_api_key: SecretStr | None = None  # None: [embedding] voyage_api_key (VOYAGE_API_KEY)
    voyage_base_url: str | None = None  # another host for the Voyage API (a gateway)
    timeout_s: float = Field(10.0, gt=0)  # one Voyage request
    llm_service: str | None = None  # a name in [llm.services]; None: the [memory.indexing] backend rule
    max_passage_chars: int = Field(500, ge=50)  # of each turn the LLM reads


# The two-stage recipes' S and T, the defaults of `[memory.retrieval]` and of `kg.queries.recipes.Recipe`.
SESSIONS_S = 10  # S: sessions stage 1 passes to stage 2
TURNS_PER_SESSION_T = 20  # T: turns stage 2 keeps from each session

VectorSet = Literal["turns", "corrections", "entities"]


class VectorSearchSettings(Section):
    """One policy for every vector search (turns, corrections, entity names): a set this small is
    scanned exactly (cosine over each vector, which beats an index that spans every namespace while
    the set is small); a larger one asks the HNSW index, fetching `index_overfetch_<kind>` hits per
    neighbour kept (up to `index_max_fetch`), since the index also returns other sets' vectors.
    Turns' index depth is `[memory.retrieval] index_candidates`; where the index filters by tenant
    (2026.02 and later) it is asked for `index_overfetch_turns` times that, else for the depth over
    the namespace's share of the index (`kg.queries.candidates.index_fetch`)."""

    exact_max_turns: int = Field(3000, ge=0)  # a namespace's turns
    exact_max_corrections: int = Field(5000, ge=0)  # a namespace's live corrections
    exact_max_entities: int = Field(300, ge=0)  # a namespace's embedded names of one entity type
    index_overfetch_corrections: int = Field(10, ge=1)
    index_overfetch_entities: int = Field(4, ge=1)
    # a wider HNSW candidate list for the same depth: at 1M turns, tenants of 10k-50k turns kept 0.988
    # of their exact top 50 at 1 and 1.0 at 2, for about 1 ms a list (docs/benchmarks.md, bench.tenants)
    index_overfetch_turns: int = Field(2, ge=1)
    index_max_fetch: int = Field(1000, ge=1)

    def exact(self, kind: VectorSet, size: int) -> bool:
        """Whether a set of `size` vectors of this kind is scanned exactly rather than through the index."""
        return size <= getattr(self, f"exact_max_{kind}")

    def index_fetch(self, kind: VectorSet, k: int, diluted: int = 0) -> int:
        """How many index hits to ask for to keep `k` of one set; `diluted`: a larger estimate
        when the set is a small share of what the index holds."""
        return min(self.index_max_fetch, max(k * getattr(self, f"index_overfetch_{kind}"), diluted))


class RetrievalSettings(Section):
    strategy: RecipeName = "hierarchical"  # the default recipe
    sessions: int = Field(SESSIONS_S, ge=1)  # S: sessions stage 1 passes to stage 2
    turns_per_session: int = Field(TURNS_PER_SESSION_T, ge=1)  # T: turns stage 2 keeps from each session
    # first-rank RRF votes from the session's quality and outcome (docs/retrieval.md); 0: unchanged ranking
    session_signal_weight: float = Field(0.0, ge=0)
    candidates: int = Field(100, ge=10)  # depth of each ranked list before fusion
    index_candidates: int = Field(50, ge=10)  # the same on large namespaces (HNSW path)
    # turns of small namespaces kept in memory for that exact search: their vectors (~3 KB a turn) and
    # their keys' postings for BM25 from the namespace's own statistics (~1 KB a LoCoMo turn, more for
    # long ones); 0: scan the store, and BM25 from Lucene's index-wide statistics
    vector_cache_turns: int = Field(50_000, ge=0)
    # and their token vectors (late interaction: 48 bytes a token, ~2 KB a LoCoMo turn, ~12 KB a long
    # answer), at most this many MB in all: least recently searched namespaces go first, as for turns
    vector_cache_late_mb: int = Field(512, ge=1)
    # namespaces too large for that exact search, of up to `keyword_max_turns` turns each, kept in memory
    # as their keys' postings only (no vectors, ~1 KB a turn), so their BM25 also reads their own
    # statistics and other tenants' writes cannot move it; this many turns in all; 0: off
    keyword_cache_turns: int = Field(200_000, ge=0)
    # a larger namespace's BM25 reads Lucene's index-wide statistics (at 30k turns own statistics cost
    # about 10 ms a search, and a first search after a restart about 1 s: docs/retrieval.md)
    keyword_max_turns: int = Field(50_000, ge=0)
    recall: RecallWeights = Field(default_factory=RecallWeights)
    rerank: RerankSettings = Field(default_factory=RerankSettings)


class ValueSettings(Section):
    """`[memory.values]`: when two objects of one subject+predicate are the same value."""

    normalize: ValueMatch = "casefold"  # casefold: case, whitespace and NFKC ignored;
    # a variant reinforces the value, which keeps the spelling it was first stored with
    predicates: dict[str, ValueMatch] = Field(default_factory=dict)  # per-predicate override


class MemorySettings(Section):
    indexing: IndexingSettings = Field(default_factory=IndexingSettings)
    predicates: dict[str, Cardinality] = Field(default_factory=dict)
    # relationship type -> cardinality, over the defaults of kg.ingest.relationship_timeline
    relationships: dict[str, Cardinality] = Field(default_factory=dict)
    values: ValueSettings = Field(default_factory=ValueSettings)
    max_clock_skew_s: float = Field(60.0, ge=0)  # a recorded_at later than the server's now plus this is refused
    confidence: ConfidenceSettings = Field(default_factory=ConfidenceSettings)
    corrections: CorrectionSettings = Field(default_factory=CorrectionSettings)
    entity_deduplication: DedupSettings = Field(default_factory=DedupSettings)
    summaries: SummarySettings = Field(default_factory=SummarySettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    vectors: VectorSearchSettings = Field(default_factory=VectorSearchSettings)  # exact scan or HNSW index
