"""Turn keys on LoCoMo: flat dense recall with each turn embedded as its text alone, as the text
with the photo caption glued on (the loader's old way), and as its key (speaker + text + caption).

    python -m bench.turn_keys --data ../shared/data/locomo/locomo_dev.json --json

No database: every turn of a conversation is embedded with the configured embedder and each
question of categories 1-4 ranks them by cosine (exact, as the flat recipe does on a small
namespace). Reported per key: turn_recall@k (share of a question's evidence turns in the top k).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Callable

import numpy as np

from bench.locomo import evidence_ids
from kg import load_settings
from kg.core.embedders.configured import embedder_for
from kg.core.models.turns import Message
from kg.ingest.loaders import Rejected, read_locomo
from kg.ingest.turn_keys import attachment_text, turn_key

KS = (1, 5, 10, 20)
KEYS: dict[str, Callable[[Message], str]] = {
    "text": lambda m: m.text,
    "text+caption": lambda m: m.text + attachment_text(m.attachments),
    "key": lambda m: turn_key(m.speaker, m.text, m.attachments),
}


def run(data: Path) -> dict:
    embedder = embedder_for(load_settings().embedding)
    conversations = json.loads(data.read_text("utf-8"))
    messages = [m for m in read_locomo(data, "k") if not isinstance(m, Rejected)]
    hits: dict[str, dict[int, list[float]]] = {name: {k: [] for k in KS} for name in KEYS}
    for conv in conversations:
        turns = [m for m in messages if m.namespace == f"k-{conv['sample_id']}"]
        ids = [m.external_id for m in turns]
        asked = [(qa["question"], evidence_ids(qa.get("evidence", []))) for qa in conv["qa"]
                 if qa.get("category") != 5 and evidence_ids(qa.get("evidence", []))]
        queries = np.asarray(embedder.embed([q for q, _ in asked]))
        for name, key in KEYS.items():
            vectors = np.asarray(embedder.embed([key(m) for m in turns]))
            order = np.argsort(-(queries @ vectors.T), axis=1)[:, : max(KS)]
            for (_, evidence), ranked in zip(asked, order):
                found = [ids[i] for i in ranked]
                for k in KS:
                    hits[name][k].append(sum(e in set(found[:k]) for e in evidence) / len(evidence))
    return {"embedder": embedder.name, "questions": len(hits["key"][KS[0]]),
            "turn_recall": {name: {str(k): round(statistics.fmean(v), 4) for k, v in per.items()}
                            for name, per in hits.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/locomo/locomo_dev.json"))
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"no LoCoMo file at {args.data} (see ../shared/data/locomo/README.md)", file=sys.stderr)
        return 2
    result = run(args.data)
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
