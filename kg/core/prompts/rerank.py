"""The LLM reranker's prompt: a question and numbered passages in, their numbers out, most helpful
first (`rerank-v1`, answered by `RerankOrder`). The read path's `LLMReranker` (`kg.queries.rerank`)
gets it from the registry and asks it through the foundation's `LLMAsker`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from kg.core.llm.asker import Prompt
from kg.core.llm.transport import Messages

RERANK_V1 = "rerank-v1"


class RerankOrder(BaseModel):
    """The passages' numbers, most relevant to the question first."""

    order: list[int] = Field(description="Passage numbers, most relevant first; each number once. "
                                         "Numbers of passages that do not help may be left out.")


_RERANK_SYSTEM_V1 = """\
You rank passages from an AI assistant's long-term memory of its conversations. Given a question \
and numbered passages (turns of past conversations, each with its speaker), order the passage \
numbers from the one that best helps to answer the question to the least helpful. Use only the \
numbers shown."""


def rerank_v1(query: str, passages: Sequence[str]) -> Messages:
    lines = [f"Question: {query}", "", "Passages:"]
    lines += [f"[{i}] " + " ".join(p.split()) for i, p in enumerate(passages, start=1)]
    lines += ["", "Order the passage numbers, most helpful first."]
    return [{"role": "system", "content": _RERANK_SYSTEM_V1}, {"role": "user", "content": "\n".join(lines)}]


RERANK = Prompt(RERANK_V1, rerank_v1, RerankOrder, "rerank")
