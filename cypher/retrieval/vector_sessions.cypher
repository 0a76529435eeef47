// Stage 2 of two-stage retrieval on large namespaces: exact cosine inside the chosen sessions (on its own
// key a long turn scores its best part, as in retrieval/vector_exact).
// One row whose `rows` lists [id, session_id, idx, speaker, ts in epoch µs, score, follows_question,
// role, text, external_id, embedding_model, attachment_kinds, attachment_captions, attachment_urls, trust] in
// rank order: the final turns all come from these sessions, so most need no separate hydration.
MATCH (t:Turn)
WHERE t.namespace = $namespace AND t.session_id IN $sessions AND t.idx IS NOT NULL
  AND ($as_of IS NULL OR t.ts <= $as_of)
// the key read once: filtering on t.embedding first read both vectors of every turn
WITH t, coalesce(t[$property], t.embedding) AS key,
     CASE WHEN $property = 'embedding' THEN t.passage_embeddings END AS more, size($vector) AS dim
WHERE key IS NOT NULL
WITH t, reduce(best = vector.similarity.cosine(key, $vector), i IN range(0, coalesce(size(more), 0) / dim - 1) |
               CASE WHEN vector.similarity.cosine(more[i * dim .. (i + 1) * dim], $vector) > best
                    THEN vector.similarity.cosine(more[i * dim .. (i + 1) * dim], $vector) ELSE best END) AS best
WITH t, round(best, 6) AS score
ORDER BY score DESC, t.id
LIMIT $k
RETURN collect([t.id, t.session_id, t.idx, t.speaker, t.ts.epochSeconds * 1000000 + t.ts.microsecond, score,
                coalesce(t.follows_question, false), t.role, t.text, t.external_id, t.embedding_model,
                t.attachment_kinds, t.attachment_captions, t.attachment_urls, t.trust]) AS rows
