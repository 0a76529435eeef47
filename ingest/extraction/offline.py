"""Deterministic extraction without a network or a model: regular expressions over the turns.

Used when no LLM is configured (`backend = "offline"`, or `"auto"` without an API key) and in
tests. It produces the same `ExtractionResult` as the LLM backends, from patterns only:

- entities: capitalized spans (a single capitalized word opening a sentence counts only if it
  also appears mid-sentence in the chunk), e-mail addresses, URLs, order numbers near the word
  "order", user speakers (person), "my wife Anna" (person, plus a relationship);
- facts, from the user's first-person sentences only: "my X is Y", "I live in Z",
  "I moved to Z" (lives_in, valid_from = the turn's timestamp), "I work at/for X", "I joined X",
  "I prefer …", "I like/love/enjoy/hate …", and retractions "I no longer …" /
  "I don't … anymore" (retracts=True, valid_from = the turn's timestamp);
- corrections: "(no,) use A instead of B", "don't do X, do Y", "stop X", "actually, …";
- decisions: "let's go with …", "we decided to …", "I'll go with …".

Recall is deliberately modest: no coreference ("she", "that one"), no facts stated in the third
person or by the assistant, no inference, and type guessing falls back to "other". Precision is
favoured: an unmatched sentence yields nothing. It never calls out, so it costs no tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kg.core.prompts.extraction import (
    NAME_MAX_CHARS,
    QUOTE_MAX_CHARS,
    ChunkInput,
    ChunkTurn,
    CorrectionType,
    ExtractedCorrection,
    ExtractedDecision,
    ExtractedEntity,
    ExtractedFact,
    ExtractedRelationship,
    ExtractionResult,
    snake_case,
)

from .extractor import Usage
from .merging import merge

OFFLINE_V1 = "offline-v1"
USER_ROLES = frozenset({"user", "human"})

_CAP = r"[A-Z][\w'’&-]*(?:\s+(?:of\s+|de\s+|van\s+|von\s+)?[A-Z][\w'’&-]*)*"
_END = r"(?=\s*(?:[,;!?]|\.(?:\s|$)|\band\b|\bbut\b|\bbecause\b|\bsince\b|$))"
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_SPAN = re.compile(r"\b" + _CAP)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_URL = re.compile(r"\bhttps?://[^\s<>\"')]+")
_ORDER = re.compile(r"(?i:\border)\b[^.!?\n]{0,20}?#?\s*([A-Z]{0,5}-?\d[\w-]{3,})")
_KIN = re.compile(
    r"(?i:\bmy\s+(wife|husband|partner|friend|boss|manager|colleague|sister|brother|mother|father"
    r"|mom|dad|son|daughter|daughter-in-law|son-in-law|cousin|aunt|uncle|dog|cat))\s+([A-Z][\w'-]+)"
)
_MY_IS = re.compile(r"(?i)\bmy\s+((?:[a-z-]+\s+){0,2}?[a-z-]+)\s+(?:is|are|'s)\s+(.+?)" + _END)
_LIVE = re.compile(r"(?i:\bI\s+(?:now\s+|currently\s+|still\s+)?live\s+in)\s+(" + _CAP + ")")
_MOVED = re.compile(r"(?i:\bI(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?moved\s+to)\s+(" + _CAP + ")")
_WORK = re.compile(r"(?i:\bI\s+(?:now\s+|currently\s+|still\s+)?work\s+(?:at|for))\s+(" + _CAP + ")")
_JOINED = re.compile(r"(?i:\bI(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?joined)\s+(" + _CAP + ")")
_PREFER = re.compile(r"(?i)\bI\s+(?:really\s+|generally\s+|usually\s+)?prefer\s+(.+?)" + _END)
_LIKE = re.compile(r"(?i)\bI\s+(?:really\s+|absolutely\s+)?(like|love|enjoy|hate|dislike)\s+(.+?)" + _END)
_NO_LONGER = re.compile(r"(?i)\bI\s+no\s+longer\s+([a-z]+)\s+(.+?)" + _END)
_NOT_ANYMORE = re.compile(r"(?i)\bI\s+(?:don't|do\s+not)\s+([a-z]+)\s+(.+?)\s+any\s?more\b")
_INSTEAD = re.compile(r"(?i)\b(?:no[,.!]?\s+)?(?:please\s+)?use\s+(.+?)\s+instead\s+of\s+(.+?)" + _END)
_DONT_DO = re.compile(
    r"(?i)^(?:no[,.!]?\s+)?(?:please\s+)?(?:don't|do\s+not|never|stop)\s+(.+?)\s*[,;]\s*"
    r"(?:instead\s*,?\s*)?(?:just\s+)?(?:please\s+)?(.+?)(?:\s+instead)?\s*[.!]?$"
)
_DONT = re.compile(r"(?i)^(?:no[,.!]?\s+)?(?:please\s+)?(don't|do\s+not|never|stop)\s+(.+?)\s*[.!]?$")
_ACTUALLY = re.compile(r"(?i)^(?:no[,.!]?\s+)?actually\s*[,:]?\s+(.+?)\s*[.!]?$")
_DECISION = re.compile(
    r"(?i)\b(?:let's\s+go\s+with|let\s+us\s+go\s+with|we(?:'ll|\s+will)\s+go\s+with|I(?:'ll|\s+will)\s+go\s+with"
    r"|we(?:'ve|\s+have)?\s+decided\s+(?:to|on)|I(?:'ve|\s+have)?\s+decided\s+(?:to|on)|go\s+ahead\s+with)\s+(.+?)\s*[.!]?$"
)
# (pattern, predicate, entity type, dated at the turn): "I moved to X" is true from that turn on.
_WHERE_AND_WHO = (
    (_LIVE, "lives_in", "place", False),
    (_MOVED, "lives_in", "place", True),
    (_WORK, "works_at", "organization", False),
    (_JOINED, "works_at", "organization", True),
)

_MY_IS_SKIP = {"bad", "question", "problem", "issue", "point", "guess", "pleasure", "concern", "goal", "plan", "idea"}
_STARTERS = {
    "i", "i'm", "i've", "i'll", "i'd", "the", "a", "an", "and", "but", "or", "so", "yes", "no", "ok", "okay",
    "hi", "hello", "hey", "thanks", "thank", "please", "sure", "great", "also", "my", "our", "your", "we",
    "you", "it", "it's", "this", "that", "these", "there", "here", "what", "when", "where", "why", "how",
    "can", "could", "would", "should", "will", "do", "does", "did", "is", "are", "let's", "actually",
    "sorry", "good", "nice", "well", "just", "then", "if", "as", "for", "in", "on", "at", "to", "from",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "today", "tomorrow",
    "welcome", "dear", "congrats", "congratulations", "sadly", "unfortunately", "luckily", "hopefully",
    "yesterday", "tonight", "after", "before", "since", "once", "while", "maybe", "perhaps", "btw",
}
_ORG_SUFFIX = re.compile(r"\b(?:Inc|Ltd|LLC|Corp|GmbH|AG|SA|Company|Bank|University|Labs|Group)\.?$")
_TOOLISH = re.compile(r"`|--|\(\)|\b(?:pip|npm|uv|git|docker|poetry|yarn|brew|apt|curl|bash|command|cli|api|library|tool)\b", re.I)
_STYLISH = re.compile(r"\b(?:tone|formal|casual|concise|verbose|short|long|emoji|markdown|bullet|format|tabs?|spaces|capitali[sz]\w*|apologi[sz]\w*)\b", re.I)
_VERB_PREDICATE = {"live": "lives_in", "work": "works_at", "have": "has", "own": "owns", "do": "does", "go": "goes"}


def _third_person(verb: str) -> str:
    verb = verb.lower()
    if verb in _VERB_PREDICATE:
        return _VERB_PREDICATE[verb]
    if re.search(r"(?:s|sh|ch|x|z)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _sentences(text: str) -> Iterator[str]:
    for s in _SENTENCE.split(text):
        if s.strip():
            yield s.strip()


def _tidy(text: str) -> str:
    return re.sub(r"[\s,;:.!?\"'“”]+$", "", text.strip(" \t\"'“”"))


def _quote(sentence: str) -> str:
    return sentence if len(sentence) <= QUOTE_MAX_CHARS else sentence[: QUOTE_MAX_CHARS - 1] + "…"


def _strip_possessive(name: str) -> str:
    return re.sub(r"['’]s$", "", name)


class _TurnReader:
    """Collects the items of one turn; `result()` gives them as an ExtractionResult."""

    def __init__(self, turn: ChunkTurn, previous: ChunkTurn | None, known_names: set[str]) -> None:
        self.turn, self.previous, self.known = turn, previous, known_names
        self.subject = turn.speaker or "user"
        self.out = ExtractionResult()

    def entity(self, name: str, type_: str = "other", **attributes: str) -> None:
        name = _tidy(_strip_possessive(name))
        if name and len(" ".join(name.split())) <= NAME_MAX_CHARS:  # a 260-character URL names nothing
            self.out.entities.append(
                ExtractedEntity(name=name, type=type_, attributes=attributes, evidence_turn_ids=[self.turn.id])
            )

    def fact(self, predicate: str, obj: str, sentence: str, *, at_turn_time: bool = False, retracts: bool = False) -> None:
        obj = _tidy(obj)
        if not obj or len(obj) > 80:
            return
        self.out.facts.append(
            ExtractedFact(
                subject=self.subject, predicate=predicate, object=obj, source="stated", quote=_quote(sentence),
                valid_from=self.turn.ts if at_turn_time else None, retracts=retracts,
                evidence_turn_ids=[self.turn.id],
            )
        )

    def correction(self, original: str, corrected: str, rule: str, kind: CorrectionType) -> None:
        original, corrected = _tidy(original), _tidy(corrected)
        if original and corrected:
            self.out.corrections.append(
                ExtractedCorrection(
                    original_behavior=original, corrected_behavior=corrected, rule_text=rule,
                    correction_type=kind, evidence_turn_ids=[self.turn.id],
                )
            )

    def read(self) -> ExtractionResult:
        text = self.turn.text
        for email in _EMAIL.findall(text):
            self.entity(email, "other", kind="email")
        for url in _URL.findall(text):
            self.entity(url.rstrip(".,;:!?"), "other", kind="url")
        is_user = self.turn.role.lower() in USER_ROLES
        if is_user and self.turn.speaker:
            self.entity(self.turn.speaker, "person")
        for sentence in _sentences(_URL.sub(" ", text)):
            self._names(sentence)
            if is_user:
                self._facts(sentence)
                self._corrections(sentence)
                self._decisions(sentence)
        return self.out

    def _names(self, sentence: str) -> None:
        if "order" in sentence.lower():
            for number in _ORDER.findall(sentence):
                if any(c.isdigit() for c in number):
                    self.entity(f"Order {number}", "order", order_number=number)
        for m in _KIN.finditer(sentence):
            self.entity(m.group(2), "person")
            relation = snake_case(m.group(1)) + "_of"
            self.out.relationships.append(
                ExtractedRelationship(**{"from": _strip_possessive(m.group(2)), "relation": relation, "to": self.subject},
                                      evidence_turn_ids=[self.turn.id])
            )
        for m in _SPAN.finditer(_EMAIL.sub(" ", sentence)):
            words = m.group(0).split()
            while words and words[0].lower() in _STARTERS:
                words = words[1:]
            if not words:
                continue
            name = _strip_possessive(" ".join(words))
            at_start = m.start() == 0 and len(words) == len(m.group(0).split())
            if at_start and len(words) == 1 and name not in self.known:
                continue
            if name.lower() in _STARTERS or any(c.isdigit() for c in name):
                continue
            self.entity(name, "organization" if _ORG_SUFFIX.search(name) else "other")

    def _facts(self, s: str) -> None:
        for m in _MY_IS.finditer(s):
            attribute = m.group(1).lower()
            if attribute.split()[-1] not in _MY_IS_SKIP:
                self.fact(snake_case(attribute), m.group(2), s)
        for pattern, predicate, kind, dated in _WHERE_AND_WHO:
            for m in pattern.finditer(s):
                self.fact(predicate, m.group(1), s, at_turn_time=dated)
                self.entity(m.group(1), kind)
        for m in _PREFER.finditer(s):
            self.fact("prefers", m.group(1), s)
        for m in _LIKE.finditer(s):
            if not m.group(2).lower().startswith("to "):  # "I'd like to …" is a request, not a taste
                self.fact(_third_person(m.group(1)), m.group(2), s)
        for m in [*_NO_LONGER.finditer(s), *_NOT_ANYMORE.finditer(s)]:
            verb, rest = m.group(1).lower(), m.group(2)
            if verb in ("live", "work"):
                rest = re.sub(r"(?i)^(?:in|at|for)\s+", "", rest)
                self.entity(rest, "place" if verb == "live" else "organization")
            self.fact(_third_person(verb), rest, s, at_turn_time=True, retracts=True)

    def _corrections(self, s: str) -> None:
        if m := _INSTEAD.search(s):
            new, old = _tidy(m.group(1)), _tidy(m.group(2))
            self.correction(f"used {old}", f"use {new}", f"Use {new} instead of {old}.", _kind(s, "preference"))
        elif m := _DONT_DO.match(s):
            old, new = _tidy(m.group(1)), _tidy(m.group(2))
            self.correction(old, new, f"Do not {old}; {new} instead.", _kind(s, "process"))
        elif m := _DONT.match(s):
            verb, old = m.group(1).lower().replace("don't", "do not"), _tidy(m.group(2))
            rule = f"{verb.capitalize()} {old}."
            self.correction(old, rule[:-1].lower(), rule, _kind(s, "process"))
        elif m := _ACTUALLY.match(s):
            said = self._previous_claim()
            corrected = _tidy(m.group(1))
            rule = f'{self.subject} corrected this: "{corrected}".'
            self.correction(said, corrected, rule, "factual")

    def _previous_claim(self) -> str:
        prev = self.previous
        if prev is not None and prev.role.lower() not in USER_ROLES:
            first = next(_sentences(prev.text), "")
            return first[:200] or "the previous answer"
        return "the previous answer"

    def _decisions(self, s: str) -> None:
        if _DECISION.search(s):
            self.out.decisions.append(ExtractedDecision(text=_tidy(s), evidence_turn_ids=[self.turn.id]))


def _kind(sentence: str, default: CorrectionType) -> CorrectionType:
    if _TOOLISH.search(sentence):
        return "tool_usage"
    if _STYLISH.search(sentence):
        return "style"
    return default


def _known_names(chunk: ChunkInput) -> set[str]:
    """Capitalized words seen mid-sentence: proper nouns, so they count at a sentence start too."""
    known: set[str] = set()
    for turn in chunk.turns:
        for sentence in _sentences(turn.text):
            known.update(_strip_possessive(m.group(0)) for m in _SPAN.finditer(sentence) if m.start() > 0)
        if turn.speaker:
            known.add(turn.speaker)
    return known


def extract_offline(chunk: ChunkInput) -> ExtractionResult:
    """The items the patterns find in `chunk`, each counted once."""
    known = _known_names(chunk)
    per_turn = [
        _TurnReader(turn, chunk.turns[i - 1] if i else None, known).read() for i, turn in enumerate(chunk.turns)
    ]
    return merge(per_turn)


class OfflineExtractor:
    backend = "offline"
    model = "rules"
    prompt_version = OFFLINE_V1

    async def extract(self, chunk: ChunkInput) -> tuple[ExtractionResult, Usage]:
        return extract_offline(chunk), Usage()
