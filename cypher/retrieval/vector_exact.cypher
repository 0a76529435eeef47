// Exact cosine over one namespace's turns on the key $property (embedding | context_embedding; a
// turn without a context key yet stands in with its own): for small namespaces, where an index
// over-fetch would mostly hit other tenants. On its own key a long turn scores its best part: the
// first (embedding) or a later one (passage_embeddings, flattened; each as long as $vector).
// `t.ts IS NOT NULL` lets the planner seek turn_namespace_ts.
// One row whose `rows` lists [id, session_id, idx, speaker, ts in epoch µs, score,
// follows_question, role, characters of its text, whether it has a context key] in rank order (one
// record instead of a hundred: decoding records dominated).
MATCH (t:Turn)
WHERE t.namespace = $namespace AND t.ts IS NOT NULL AND ($as_of IS NULL OR t.ts <= $as_of)
WITH t, coalesce(t[$property], t.embedding) AS key,  // read once, not t.embedding first as a filter
     CASE WHEN $property = 'embedding' THEN t.passage_embeddings END AS more, size($vector) AS dim
WHERE key IS NOT NULL
WITH t, reduce(best = vector.similarity.cosine(key, $vector), i IN range(0, coalesce(size(more), 0) / dim - 1) |
               CASE WHEN vector.similarity.cosine(more[i * dim .. (i + 1) * dim], $vector) > best
                    THEN vector.similarity.cosine(more[i * dim .. (i + 1) * dim], $vector) ELSE best END) AS best
WITH t, round(best, 6) AS score
ORDER BY score DESC, t.id
LIMIT $k
RETURN collect([t.id, t.session_id, t.idx, t.speaker, t.ts.epochSeconds * 1000000 + t.ts.microsecond, score,
                coalesce(t.follows_question, false), t.role, size(t.text),
                t.context_text IS NOT NULL]) AS rows
