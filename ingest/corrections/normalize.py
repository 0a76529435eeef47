"""Rule texts in one canonical wording, and their shape: pure functions, no database, no model.

The canonical text (`rule_key`) is what gets embedded. Measured with all-MiniLM-L6-v2, surface
variants of one rule ("Prefer uv over pip.", "Don't use pip, use uv.", "Please use uv rather than
pip.") score 0.70-0.85 as written and identical or >= 0.9 once canonical, so the ingest threshold
can stay strict. Normalizing cannot make true paraphrases ("Keep answers short." / "Give shorter
answers.") agree; those are left to the nightly clustering.

Canonical form: lower case, contractions expanded, politeness and frequency words dropped
("please", "always", "make sure to"), every negation as "do not" ("never", "avoid", "stop
using"), every preference between two things as "X instead of Y" ("prefer X over Y", "X rather
than Y", "X, not Y", "do not use Y, use X"), examples ("e.g. ...", parentheses) dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kg.core.vocabulary import ConflictLink

Conflict = ConflictLink  # the `LINK` types a conflict writes

_CONTRACTIONS = {
    "don't": "do not", "dont": "do not", "doesn't": "does not", "didn't": "did not", "won't": "will not",
    "can't": "cannot", "shouldn't": "should not", "mustn't": "must not", "isn't": "is not",
    "aren't": "are not", "let's": "let us", "you're": "you are", "it's": "it is", "i'd": "i would",
    "i'm": "i am", "you'll": "you will", "we're": "we are",
}
_CONTRACTION = re.compile(r"\b(" + "|".join(re.escape(k) for k in _CONTRACTIONS) + r")\b")
_EXAMPLES = re.compile(r"\([^)]*\)|\b(?:e\.g\.|eg\.|i\.e\.|for example|for instance)[^;.!?]*")
_FILLER = re.compile(
    r"\b(?:please|kindly|always|just|really|from now on|going forward|in the future|every time|each time|"
    r"make sure(?: to| that| you)?|remember to|be sure to|i want you to|i would like you to|"
    r"you should|you must|you need to|you have to|we should|we need to|try to)\b")
_NEGATION = re.compile(r"\b(?:do not|never|avoid|stop|quit|no longer|should not|must not)\b")
_PREFER = re.compile(r"^prefer (.+?) (?:over|to) (.+)$")
_RATHER = re.compile(r"\b(?:rather than|in place of|over)\b")
_NOT_Y_USE_X = re.compile(r"^do not (?:use )?(.+?)\s*[,;:]\s*(?:but )?(?:use )?(.+)$")
_X_NOT_Y = re.compile(r"^(.+?)\s*,?\s+not (.+?)(?:\s*,\s*(.+))?$")
_GERUNDS = {"using": "use", "writing": "write", "making": "make", "giving": "give", "taking": "take",
            "having": "have", "leaving": "leave", "changing": "change", "naming": "name", "including": "include",
            "removing": "remove", "saving": "save", "closing": "close", "sharing": "share", "typing": "type",
            "adding": "add", "putting": "put", "running": "run", "calling": "call", "asking": "ask"}
_STOPWORDS = frozenset(
    "a an the to of in on for with by at from and or but as is are be been it its this that these those your "
    "you my our we i me us them they their do does not instead any every each all some more most than so "
    "use used uses prefer".split())


def normalize(text: str) -> str:
    """The canonical wording of a rule (see the module docstring)."""
    t = " ".join(text.replace("\u2019", "'").lower().split())
    t = _CONTRACTION.sub(lambda m: _CONTRACTIONS[m.group(1)], t)
    t = _EXAMPLES.sub(" ", t)
    t = _FILLER.sub(" ", t)
    t = re.sub(r"[!?.]+(\s|$)", " ", t)  # sentence ends, not the dot in "settings.toml"
    t = re.sub(r"[^\w\s,;:'.-]", " ", t)
    t = " ".join(t.split()).strip(" ,;:")
    t = _NEGATION.sub("do not", t)
    t = re.sub(r"\bdo not (?:do not )+", "do not ", t)
    t = re.sub(r"\bdo not (\w+ing)\b", lambda m: "do not " + _base_verb(m.group(1)), t)
    t = _instead(t)
    t = re.sub(r"\s*[,;:]\s*", " ", t)
    return " ".join(t.split()).strip(" .")


def _base_verb(word: str) -> str:
    if word in _GERUNDS:
        return _GERUNDS[word]
    stem = word[:-3]
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "aeiouls":
        return stem[:-1]
    return stem if len(stem) > 2 else word


def _instead(t: str) -> str:
    """Every "one thing rather than another" as "X instead of Y"."""
    if m := _PREFER.match(t):
        return f"use {m.group(1)} instead of {m.group(2)}"
    if m := _NOT_Y_USE_X.match(t):
        return f"use {m.group(2)} instead of {m.group(1)}"
    if not t.startswith("do not ") and " instead of " not in t:
        if (m := _X_NOT_Y.match(t)) and "," in t:
            rest = f" {m.group(3)}" if m.group(3) else ""
            return f"{m.group(1)} instead of {m.group(2)}{rest}"
    return _RATHER.sub("instead of", t) if " do not " not in f" {t}" else t


def tokens(text: str) -> frozenset[str]:
    """Content words, crudely stemmed (plural and -ing endings), for overlap tests."""
    out = set()
    for word in re.findall(r"[a-z0-9][a-z0-9.+#_-]*", text):
        word = word.strip(".-")
        if word in _STOPWORDS or not word:
            continue
        if word.endswith("ing") and len(word) > 5:
            word = _base_verb(word)
        elif word.endswith("ies") and len(word) > 4:
            word = word[:-3] + "y"
        elif word.endswith("es") and len(word) > 4 and word[-3] in "sxz":
            word = word[:-2]
        elif word.endswith("s") and len(word) > 3 and not word.endswith("ss"):
            word = word[:-1]
        out.add(word)
    return frozenset(out)


@dataclass(frozen=True)
class RuleShape:
    """A canonical rule read as: (do not) <body>, where a body may be "<preferred> instead of <replaced>"."""

    key: str
    negated: bool
    body: frozenset[str]
    preferred: frozenset[str] = frozenset()
    replaced: frozenset[str] = frozenset()

    @property
    def is_choice(self) -> bool:
        return bool(self.preferred and self.replaced)


def shape(key: str) -> RuleShape:
    negated = key.startswith("do not ")
    body = key[len("do not "):] if negated else key
    if not negated and " instead of " in body:
        preferred, replaced = body.split(" instead of ", 1)
        return RuleShape(key, False, tokens(body), tokens(preferred), tokens(replaced))
    return RuleShape(key, negated, tokens(body))


def _same_action(a: frozenset[str], b: frozenset[str]) -> bool:
    if not a or not b:
        return False
    return a <= b or b <= a or len(a & b) / len(a | b) >= 0.5


def conflict(new: RuleShape, old: RuleShape) -> Conflict | None:
    """How `new` goes against `old`: "supersedes" (the choice between two things flipped),
    "contradicts" (one says do, the other do not), or None (they agree or are unrelated)."""
    if new.is_choice and old.is_choice:
        flipped = new.preferred & old.replaced and new.replaced & old.preferred
        return "supersedes" if flipped and not (new.preferred & old.preferred) else None
    if new.is_choice or old.is_choice:
        choice, other = (new, old) if new.is_choice else (old, new)
        if other.negated:  # "do not use X" against "X instead of Y", or against "Y instead of X" (agrees)
            hits_preferred = _same_action(other.body, choice.preferred) or bool(other.body & choice.preferred)
            return "contradicts" if hits_preferred and not other.body & choice.replaced else None
        # "use tabs" against "spaces instead of tabs"
        if other.body & choice.replaced and not other.body & choice.preferred:
            return "supersedes"
        return None
    if new.negated != old.negated and _same_action(new.body, old.body):
        return "contradicts"
    return None

