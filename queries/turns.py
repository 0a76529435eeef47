"""User text as Lucene queries: escaped, bounded, and scoped to one namespace."""

from __future__ import annotations

import re
from collections.abc import Sequence

# Lucene operators and syntax characters; escaped so user text is only ever searched for.
_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')
_TERM = re.compile(r"\w[\w'’.-]*")
# Lucene refuses a query of more than 1024 clauses, and each term is one clause per field searched
# (a summary query searches two). A longer question's extra words add little to BM25's ranking.
MAX_TERMS = 64


def bounded(text: str, max_terms: int = MAX_TERMS) -> str:
    """The first `max_terms` distinct words of `text` (case-insensitively), in order."""
    distinct: dict[str, str] = {}
    for word in _TERM.findall(text):
        distinct.setdefault(word.lower(), word)
    return " ".join(list(distinct.values())[:max_terms]) if len(distinct) > max_terms else text


def lucene_escape(text: str) -> str:
    """User text as a Lucene query of plain terms (operators escaped, AND/OR/NOT lower-cased), at
    most `MAX_TERMS` distinct words."""
    escaped = _LUCENE_SPECIAL.sub(r"\\\1", bounded(text))
    return re.sub(r"\b(AND|OR|NOT|TO)\b", lambda m: m.group(1).lower(), escaped).strip()


def scoped(namespace: str, fields: Sequence[str], terms: str, alone: bool = False) -> str:
    """`terms` (escaped by `lucene_escape`) in any of `fields`, among `namespace`'s documents only.

    The namespace clause is required but scores nothing (^0): BM25 ranks by the text alone, and
    Lucene never ranks other tenants' documents (the indexes hold the namespace, migration 0008).
    The Cypher still checks the namespace exactly, and drops hits that scored 0 (only the namespace
    clause matched: the terms were all stop words).

    `alone`: the namespace holds every document of the index (one tenant), so the clause is left
    out: it cost a third of a BM25 query over 100k turns. Were that stale, other tenants' documents
    would share the ranking (as before migration 0008) but still never be returned."""
    if not re.search(r"\w", terms):
        return ""
    text = "+(" + " ".join(f"{f}:({terms})" for f in fields) + ")"
    if alone:
        return text
    quoted = namespace.replace("\\", "\\\\").replace('"', '\\"')
    return f'+namespace:"{quoted}"^0 ' + text
