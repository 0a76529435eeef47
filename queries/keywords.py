"""BM25 over one namespace's own turns, with the namespace's own statistics.

Lucene's fulltext indexes hold every tenant, and BM25's document frequencies and average lengths are
the whole index's: another tenant's writes move this tenant's scores (docs/retrieval.md). For a
namespace whose turns the in-memory cache holds (`kg.queries.vectors`), the keyword lists are scored
here instead, from the namespace's documents alone, as Lucene would score them were the namespace
the only tenant: the analysis of the indexes' `english` analyzer (standard tokens, the possessive
dropped, lower case, its 33 stop words, Porter stems by Snowball's C code), BM25 with k1 = 1.2 and
b = 0.75, and document lengths rounded as Lucene's norms round them.

A block's postings are three flat arrays (term id, row, frequency), so a namespace of a few thousand
turns costs a few megabytes, and a search is one pass over them with numpy. Term ids are the
process's (`_IDS`): one entry per word any cached namespace uses.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

K1, B = 1.2, 0.75
# db.index.fulltext.listAvailableAnalyzers(): the `english` analyzer's stop words
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
    "this to was will with".split()
)
# Letters and digits, joined by an apostrophe or a dot between them ("don't", "u.s.a", "3.5") or a
# comma between digits ("1,000"), as the standard tokenizer keeps them in one token.
_TOKEN = re.compile(r"\w+(?:(?:['’.]|(?<=\d),(?=\d))\w+)*")
_POSSESSIVE = re.compile(r"['’]s(?!\w)")  # a token's trailing 's
_STEMS: dict[str, str] = {}
_STEMS_MAX = 200_000  # memoised stems
_stemmer: Any = None
_IDS: dict[str, int] = {}  # term -> id, shared by every namespace of the process


def analyze(text: str) -> list[str]:
    """The index terms of `text`, in order."""
    words = _TOKEN.findall(_POSSESSIVE.sub("", text.lower()))
    stems = _STEMS
    new = set(words).difference(stems)
    if new:
        if len(stems) + len(new) > _STEMS_MAX:
            stems.clear()
            new = set(words)
        fresh = sorted(new - STOP_WORDS)
        stems.update(zip(fresh, _porter().stemWords(fresh)))
        stems.update(dict.fromkeys(new & STOP_WORDS, ""))  # a stop word's stem is "": left out below
    return [stem for stem in map(stems.__getitem__, words) if stem]


def _porter() -> Any:
    global _stemmer
    if _stemmer is None:  # imported on first use
        import Stemmer

        _stemmer = Stemmer.Stemmer("porter")
    return _stemmer


def _int4(i: int) -> int:
    """Lucene's SmallFloat.longToInt4: 4 significant bits and an exponent."""
    bits = i.bit_length()
    if bits < 4:
        return i
    shift = bits - 4
    return ((i >> shift) & 0x07) | ((shift + 1) << 3)


def _from_int4(i: int) -> int:
    shift = (i >> 3) - 1
    return i & 0x07 if shift == -1 else ((i & 0x07) | 0x08) << shift


_FREE = 255 - _int4(2**31 - 1)  # lengths below this are kept exactly


def norm_length(n: int) -> int:
    """A document's length as Lucene's norm keeps it (SmallFloat.intToByte4, then back)."""
    if n < _FREE:
        return n
    return _FREE + _from_int4(_int4(n - _FREE))


@dataclass(frozen=True)
class Postings:
    """The terms of some rows' texts: `terms[i]` occurs `freqs[i]` times in row `rows[i]`; `lengths`
    is each row's length in terms as the norm keeps it (0: no terms, so not a document, as in Lucene)."""

    terms: np.ndarray  # int32 term ids
    rows: np.ndarray  # int32
    freqs: np.ndarray  # float32
    lengths: np.ndarray  # float32, one per row


def postings(texts: Sequence[str | None]) -> Postings:
    found = [analyze(text) if text else [] for text in texts]
    sizes = np.fromiter(map(len, found), dtype=np.int64, count=len(found))
    lengths = np.fromiter(map(norm_length, sizes.tolist()), dtype=np.float32, count=len(found))
    words = [w for terms in found for w in terms]
    for word in set(words).difference(_IDS):
        _IDS[word] = len(_IDS)
    ids = np.fromiter(map(_IDS.__getitem__, words), dtype=np.int64, count=len(words))
    rows = np.repeat(np.arange(len(found), dtype=np.int64), sizes)
    pairs, freqs = np.unique(rows << 32 | ids, return_counts=True)  # (row, term) pairs, each once
    return Postings((pairs & 0xFFFFFFFF).astype(np.int32), (pairs >> 32).astype(np.int32),
                    freqs.astype(np.float32), lengths)


def joined(parts: Sequence[tuple[Postings, int]], size: int) -> Postings:
    """One namespace's postings from its blocks' (postings, first row), `size` rows in all."""
    lengths = np.zeros(size, dtype=np.float32)
    for p, start in parts:
        lengths[start : start + len(p.lengths)] = p.lengths
    if not parts:
        return Postings(np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.float32), lengths)
    return Postings(np.concatenate([p.terms for p, _ in parts]),
                    np.concatenate([p.rows + start for p, start in parts]).astype(np.int32),
                    np.concatenate([p.freqs for p, _ in parts]), lengths)


def appended(held: Postings, more: Postings) -> Postings:
    """`held`, then the rows of `more`."""
    return joined([(held, 0), (more, len(held.lengths))], len(held.lengths) + len(more.lengths))


def replaced(held: Postings, texts: dict[int, str | None]) -> Postings:
    """`held` with the texts of some of its rows replaced."""
    at = np.asarray(sorted(texts), dtype=np.int32)
    new = postings([texts[int(r)] for r in at])
    keep = ~np.isin(held.rows, at)
    lengths = held.lengths.copy()
    lengths[at] = new.lengths
    return Postings(np.concatenate([held.terms[keep], new.terms]), np.concatenate([held.rows[keep], at[new.rows]]),
                    np.concatenate([held.freqs[keep], new.freqs]), lengths)


def summed(index: Postings, groups: np.ndarray, count: int, keep: np.ndarray | None = None) -> Postings:
    """The rows of each group as one document (row r in group `groups[r]`, of `count`): the group's
    terms with their rows' frequencies added, its length their terms' count as the norm keeps it; rows
    outside `keep` (a mask over rows) left out."""
    terms, rows, freqs = index.terms, index.rows, index.freqs
    if keep is not None:
        hit = keep[rows]
        terms, rows, freqs = terms[hit], rows[hit], freqs[hit]
    owner = groups[rows].astype(np.int64)
    pairs, at = np.unique(owner << 32 | terms.astype(np.int64), return_inverse=True)
    added = np.bincount(at, weights=freqs, minlength=len(pairs)).astype(np.float32)
    sizes = np.bincount(owner, weights=freqs, minlength=count).astype(np.int64)
    lengths = np.fromiter(map(norm_length, sizes.tolist()), dtype=np.float32, count=count)
    return Postings((pairs & 0xFFFFFFFF).astype(np.int32), (pairs >> 32).astype(np.int32), added, lengths)


def scores(index: Postings, query: str) -> np.ndarray:
    """Each row's BM25 score for `query` (0: no query term in it); a word the query repeats counts
    again, as each is a clause of Lucene's query."""
    out = np.zeros(len(index.lengths), dtype=np.float64)
    asked = Counter(_IDS[t] for t in analyze(query) if t in _IDS)
    documents = int(np.count_nonzero(index.lengths))
    if not asked or not documents:
        return out
    wanted = np.zeros(len(_IDS), dtype=bool)  # one lookup per posting, not one pass per query term
    wanted[np.fromiter(asked, dtype=np.int64, count=len(asked))] = True
    hit = wanted[index.terms]
    terms, rows, freqs = index.terms[hit], index.rows[hit], index.freqs[hit].astype(np.float64)
    average = float(index.freqs.sum()) / documents  # Lucene's avgdl: the exact term count per document
    norms = K1 * (1 - B + B * index.lengths[rows].astype(np.float64) / average)
    for term, times in asked.items():
        mine = terms == term
        n = int(np.count_nonzero(mine))
        if not n:
            continue
        idf = np.log(1 + (documents - n + 0.5) / (n + 0.5))
        f = freqs[mine]
        np.add.at(out, rows[mine], times * idf * f / (f + norms[mine]))
    return out
