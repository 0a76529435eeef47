"""The stream resolver: for each mention, gather candidates, let the stages judge, merge or create."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from kg.core.embedders.base import TextEmbedder
from kg.core.settings.dedup import DedupSettings

from .candidates import CandidateSource
from .entity import absorb, new_entity
from .model import STAGE_RANK, Entity, MatchDecision, Mention, Resolution
from .profile import Profile, profile
from .stages import compare

# Stage 5: settles an ambiguous outcome. Gets the mention and the ambiguous candidates; returns
# the id of the one it is, NONE_OF_THEM (a new entity), or None when it could not decide (then
# `on_ambiguous` applies). See `kg.ingest.dedup.adjudication`.
Adjudicate = Callable[[Profile, Sequence[Entity]], "str | None"]
NONE_OF_THEM = ""


def sequential_ids(prefix: str = "ent") -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"{prefix}{next(counter):06d}"


def embedding_text(mention: Mention, include_context: bool) -> str:
    return f"{mention.name}: {mention.context}" if include_context and mention.context else mention.name


def choose(decisions: dict[str, MatchDecision]) -> tuple[str | None, MatchDecision | None, tuple[str, ...]]:
    """(winner, its decision, ambiguous candidates) from per-candidate decisions.

    The strongest stage that said "same" wins; two entities tied at that stage (two
    "J. Williams" that "J. Williams" could be) make the outcome ambiguous instead.
    """
    same = [(i, d) for i, d in decisions.items() if d.verdict == "same"]
    ambiguous = tuple(i for i, d in decisions.items() if d.verdict == "ambiguous")
    if not same:
        return None, None, ambiguous
    best_rank = min(STAGE_RANK[d.stage] for _, d in same)
    top = sorted(((i, d) for i, d in same if STAGE_RANK[d.stage] == best_rank), key=lambda p: -p[1].score)
    if len(top) == 1 or top[0][1].stage == "attribute" or top[0][1].score > top[1][1].score:
        return top[0][0], top[0][1], ()
    return None, None, tuple(i for i, _ in top)


class Resolver:
    """Resolves mentions one at a time against what was resolved before."""

    def __init__(
        self,
        source: CandidateSource,
        settings: DedupSettings | None = None,
        embedder: TextEmbedder | None = None,
        new_id: Callable[[], str] | None = None,
        adjudicate: Adjudicate | None = None,
    ) -> None:
        self.source = source
        self.settings = settings or DedupSettings()
        self.embedder = embedder if self.settings.embedding.enabled else None
        self.new_id = new_id or sequential_ids()
        self.adjudicate = adjudicate

    def resolve(self, mention: Mention) -> Resolution:
        prof = profile(mention, self.settings)
        candidates = self._candidates(prof)
        decisions = {c.id: compare(prof, c, self.settings) for c in candidates.values()}
        winner, decision, ambiguous = choose(decisions)
        vector: list[float] | None = None
        # Meaning is consulted last, and only when identifiers and names have not settled it.
        if decision is None or decision.stage not in ("attribute", "exact", "alias"):
            vector = self._vector(prof)
            if vector is not None:
                similarity = self._nearest(prof, vector, candidates)
                decisions = {
                    c.id: compare(prof, c, self.settings, similarity.get(c.id)) for c in candidates.values()
                }
                winner, decision, ambiguous = choose(decisions)
        if winner is None and ambiguous and self.adjudicate is not None:
            chosen = self.adjudicate(prof, [candidates[i] for i in ambiguous])
            if chosen in ambiguous:
                winner, decision = chosen, MatchDecision("llm", decisions[chosen].score, "same", "adjudicated")
            elif chosen == NONE_OF_THEM:
                ambiguous = ()  # settled: a different entity
        if winner is None and ambiguous and self.settings.on_ambiguous == "merge_best":
            winner = max(ambiguous, key=lambda i: decisions[i].score)
            decision = decisions[winner]
        if winner is not None:
            self.source.save(absorb(candidates[winner], prof, vector))
            return Resolution(winner, created=False, decision=decision)
        entity = new_entity(self.new_id(), prof, vector)
        self.source.save(entity)
        return Resolution(entity.id, created=True, ambiguous_with=ambiguous)

    def resolve_all(self, mentions: Sequence[Mention]) -> list[Resolution]:
        return [self.resolve(m) for m in mentions]

    def _vector(self, prof: Profile) -> list[float] | None:
        stage = self.settings.embedding
        if self.embedder is None or prof.type not in stage.types or prof.low_information:
            return None
        return self.embedder.embed([embedding_text(prof.mention, stage.include_context)])[0]

    def _candidates(self, prof: Profile) -> dict[str, Entity]:
        """Blocking: everything sharing an identifier or a key, plus the nearest spellings."""
        settings, source = self.settings, self.source
        found: dict[str, Entity] = {}
        lookups = [source.by_identifier(kind, value) for kind, value in prof.identifiers.items()]
        lookups += [source.by_key(prof.type, key) for key in sorted(prof.lookup_keys)]
        if settings.fuzzy.enabled and not prof.low_information:
            lookups.append(source.fuzzy_candidates(prof.type, prof.name, settings.fuzzy.limit))
        for entity in (e for found_by in lookups for e in found_by):
            if len(found) < settings.max_candidates:
                found.setdefault(entity.id, entity)
        return found

    def _nearest(self, prof: Profile, vector: list[float], found: dict[str, Entity]) -> dict[str, float]:
        """Adds the nearest entities by meaning to `found`; returns every similarity computed."""
        similarity: dict[str, float] = {}
        for entity, score in self.source.nearest(prof.type, vector, self.settings.embedding.k):
            found.setdefault(entity.id, entity)
            similarity[entity.id] = score
        return similarity
