"""The offline summarizer: extractive, no network, labelled `model = "offline-extractive"`.

A summary quotes the most central turns (closest to the mean of the session's turn embeddings,
longer turns preferred), in their order, under a line naming the date, the length and the
speakers; topics are keyphrases (RAKE: runs of content words scored by degree over frequency);
entities and decisions come from the offline extractor's patterns. It cannot judge outcome or
quality: outcome is "ongoing" while the session is open and unknown otherwise, quality unknown.
"""

from __future__ import annotations

import asyncio
import math
import operator
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from kg.core.embedders.base import Embedder, embed_async
from kg.core.models.recall import OFFLINE_MODEL
from kg.core.prompts.extraction import ChunkInput, ChunkTurn
from kg.core.prompts.summaries import EarlyVector, Part, SummaryDraft
from kg.core.settings.memory import SummarySettings

from ..extraction.offline import extract_offline
from .keys import quoted_vector

OFFLINE_PROMPT = "extractive-v1"
QUOTE_CHARS = 320

_STOP = frozenset("""
a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
even ever every few for from further get gets getting got had hadn't has hasn't have haven't having he he'd
he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it
it's its itself just know let's like lot lots make made me more most much must my myself need no nor not now
of off oh ok okay on once one only or other ought our ours ourselves out over own pretty quite really right
said same say see she she'd she'll she's should shouldn't so some such sure than thank thanks that that's the
their theirs them themselves then there there's these they they'd they'll they're they've thing things think
this those though through to too totally under until up us very was wasn't way we we'd we'll we're we've well
were weren't what what's when when's where where's which while who who's whom why why's will with won't would
wouldn't wow yeah yes yet you you'd you'll you're you've your yours yourself yourselves great good awesome
amazing cool hey hi hello glad happy love feel feels felt going go went want wanted time times day days
gonna wanna kinda gotta last lately recently definitely absolutely super nice tough hard hope
""".split())
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_SPLIT = re.compile(r"[.,;:!?()\[\]\"“”…\n]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def keyphrases(texts: Sequence[str], n: int, exclude: AbstractSet[str] = frozenset()) -> list[str]:
    """The `n` best RAKE phrases of `texts` (at most three words, names in `exclude` dropped)."""
    phrases: list[tuple[str, ...]] = []
    for text in texts:
        for fragment in _SPLIT.split(text):
            run: list[str] = []
            for word in _WORD.findall(fragment):
                w = word.lower().replace("’", "'")
                if w in _STOP or w in exclude or len(w) < 3:
                    if run:
                        phrases.append(tuple(run[:3]))
                    run = []
                else:
                    run.append(w)
            if run:
                phrases.append(tuple(run[:3]))
    freq: Counter[str] = Counter()
    degree: Counter[str] = Counter()
    for p in phrases:
        for w in p:
            freq[w] += 1
            degree[w] += len(p)
    seen: dict[tuple[str, ...], float] = {}
    counts = Counter(phrases)
    for p, c in counts.items():
        seen[p] = sum(degree[w] / freq[w] for w in p) * (1 + math.log(c))
    ranked = sorted(seen, key=lambda p: (-seen[p], p))
    out: list[str] = []
    for p in ranked:
        phrase = " ".join(p)
        if any(phrase in o or o in phrase for o in out):
            continue
        out.append(phrase)
        if len(out) == n:
            break
    return out


def central(vectors: Sequence[Sequence[float] | None], lengths: Sequence[int], m: int) -> list[int]:
    """Positions of the `m` items closest to the centroid, weighted toward informative lengths;
    returned in their original order."""
    present = [(i, v) for i, v in enumerate(vectors) if v is not None]
    if not present:
        return sorted(sorted(range(len(lengths)), key=lambda i: -lengths[i])[:m])
    cosines = _cosines([v for _, v in present])
    scores = {i: cosine * min(1.0, 0.35 + lengths[i] / 120) for (i, _), cosine in zip(present, cosines)}
    return sorted(sorted(scores, key=lambda i: -scores[i])[:m])


def _cosines(present: Sequence[Sequence[float]]) -> list[float]:
    """Each vector's dot product with the vectors' centroid over the centroid's length. The sums run
    in the order of plain loops (columns by `zip`, products by `map`): the same floats, faster."""
    centroid = [sum(column) / len(present) for column in zip(*present)]
    norm = math.sqrt(sum(map(operator.mul, centroid, centroid))) or 1.0
    return [sum(map(operator.mul, v, centroid)) / norm for v in present]


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _complexity(n_items: int, topics: int, spread: float) -> float:
    return round(min(1.0, 0.4 * min(1.0, math.log1p(n_items) / math.log(200)) + 0.3 * min(1.0, topics / 10)
                     + 0.3 * max(0.0, min(1.0, spread))), 3)


def _spread(vectors: Sequence[Sequence[float] | None]) -> float:
    """1 - mean cosine to the centroid: how many directions the conversation went in."""
    present = [v for v in vectors if v is not None]
    if len(present) < 2:
        return 0.0
    return 1.0 - sum(_cosines(present)) / len(present)


class OfflineSummarizer:
    model = OFFLINE_MODEL
    prompt_version = OFFLINE_PROMPT
    rollup_prompt_version = OFFLINE_PROMPT

    def __init__(self, settings: SummarySettings, embedder: Embedder) -> None:
        self.settings = settings
        self.embedder = embedder

    async def summarize_turns(
        self, session_id: str, turns: list[ChunkTurn], embeddings: list[list[float] | None], open_: bool
    ) -> SummaryDraft:
        cfg = self.settings
        speakers = list(dict.fromkeys(t.speaker or t.role for t in turns))
        picks = central(embeddings, [len(t.text) for t in turns], cfg.central_turns)
        lines = [f"{turns[i].speaker or turns[i].role}: {_quote(turns[i].text)}" for i in picks]
        first, last = turns[0].ts, turns[-1].ts
        when = f" on {first:%d %B %Y}" if first is not None else ""
        if first is not None and last is not None and last.date() != first.date():
            when = f" from {first:%d %B %Y} to {last:%d %B %Y}"
        head = f"Conversation between {', '.join(speakers)}{when}, {len(turns)} turns."
        exclude = {s.lower() for s in speakers}
        topics = keyphrases([t.text for t in turns], cfg.keyphrases, exclude)
        text = "\n".join([head, "Topics: " + ", ".join(topics) + "." if topics else "", *lines])
        text = SummaryDraft(text=_clip("\n".join(x for x in text.split("\n") if x), cfg.max_chars)).text
        early = self._vector(text, [turns[i].id for i in picks], [embeddings[i] for i in picks])
        found = extract_offline(ChunkInput(session_id=session_id, turns=turns))
        entities = list(dict.fromkeys([*speakers, *(e.name for e in found.entities)]))
        intent = _intent(turns)
        draft = SummaryDraft(
            text=text, topics=topics, entities=entities[:20], primary_intent=intent,
            outcome="ongoing" if open_ else None, decisions=[d.text for d in found.decisions][:10],
            complexity=_complexity(len(turns), len(topics), _spread(embeddings)), quality=None,
        )
        draft.attach(early)
        return draft

    def _vector(self, text: str, ids: list[str], vectors: list[list[float] | None]) -> EarlyVector:
        """The summary's vector: the unit mean of the quoted turns' own vectors, so closing embeds
        nothing (`quoted_vector`); when a quoted turn has none (the fallback embedder's), the text's
        embedding, begun now: the embedder (its own thread) reads it while the extractor runs here."""
        vector = quoted_vector(vectors, self.embedder.dim)
        if vector is not None:
            made: asyncio.Future[list[list[float]]] = asyncio.get_running_loop().create_future()
            made.set_result([vector])
            return EarlyVector(text, self.embedder.name, made, tuple(ids))
        return EarlyVector(text, self.embedder.name, asyncio.ensure_future(embed_async(self.embedder, [text])))

    async def rollup(self, session_id: str, parts: list[Part], open_: bool) -> SummaryDraft:
        cfg = self.settings
        sentences = [s for p in parts for s in (x.strip() for x in p.text.split("\n")) if s]
        vectors = await embed_async(self.embedder, sentences)
        picks = central(vectors, [len(s) for s in sentences], cfg.central_turns * 2)
        counted: dict[str, int] = defaultdict(int)
        for p in parts:
            for t in p.topics:
                counted[t] += 1
        topics = sorted(counted, key=lambda t: -counted[t])[: cfg.keyphrases]
        head = f"Long conversation, turns {parts[0].start} to {parts[-1].end - 1}, summarized in {len(parts)} parts."
        body = [head, "Topics: " + ", ".join(topics) + "." if topics else "", *(sentences[i] for i in picks)]
        return SummaryDraft(
            text=_clip("\n".join(x for x in body if x), cfg.max_chars), topics=topics,
            outcome="ongoing" if open_ else None,
            complexity=_complexity(parts[-1].end - parts[0].start, len(topics), _spread(vectors)),
        )


def _intent(turns: Sequence[ChunkTurn]) -> str | None:
    """The user's first substantial sentence (greetings skipped), preferring a question."""
    sentences = [s for t in turns if t.role == "user" for s in _SENTENCE.split(" ".join(t.text.split()))
                 if len(s.split()) >= 5]
    pick = next((s for s in sentences[:6] if s.endswith("?")), sentences[0] if sentences else None)
    return pick[:200] if pick else None


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
