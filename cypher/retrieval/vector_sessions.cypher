// Stage 2 of two-stage retrieval on large namespaces: exact cosine inside the chosen sessions, on each
// key of $properties at once (each turn read once; on its own key a long turn scores its best part,
// as in retrieval/vector_exact; a turn without a context key yet stands in with its own vector).
// One row whose `lists` holds [i, rows] for the i-th property (none when nothing scored); `rows` lists
// [id, session_id, idx, speaker, ts in epoch µs, score, follows_question, role, whether it has a context
// key, text, external_id, embedding_model, attachment_kinds, attachment_captions, attachment_urls, trust]
// in rank order: the final turns all come from these sessions, so most need no separate hydration.
MATCH (t:Turn)
WHERE t.namespace = $namespace AND t.session_id IN $sessions AND t.idx IS NOT NULL
  AND ($as_of IS NULL OR t.ts <= $as_of)
WITH t, size($vector) AS dim, t.embedding AS own
WITH t, [p IN $properties |
         CASE WHEN p = 'embedding'
              THEN reduce(best = vector.similarity.cosine(own, $vector),
                          i IN range(0, coalesce(size(t.passage_embeddings), 0) / dim - 1) |
                          CASE WHEN vector.similarity.cosine(t.passage_embeddings[i * dim .. (i + 1) * dim], $vector) > best
                               THEN vector.similarity.cosine(t.passage_embeddings[i * dim .. (i + 1) * dim], $vector)
                               ELSE best END)
              ELSE vector.similarity.cosine(coalesce(t[p], own), $vector) END] AS scores
UNWIND range(0, size($properties) - 1) AS i
WITH i, t, round(scores[i], 6) AS score
WHERE score IS NOT NULL
ORDER BY i, score DESC, t.id
WITH i, collect([t.id, t.session_id, t.idx, t.speaker, t.ts.epochSeconds * 1000000 + t.ts.microsecond, score,
                 coalesce(t.follows_question, false), t.role, t.context_text IS NOT NULL, t.text, t.external_id,
                 t.embedding_model, t.attachment_kinds, t.attachment_captions, t.attachment_urls, t.trust])[..$k] AS rows
RETURN collect([i, rows]) AS lists
