// Approximate (HNSW) search of the vector index $index, over-fetched ($fetch) then kept to the namespace.
// One row whose `rows` lists [id, session_id, idx, speaker, ts in epoch µs, score,
// follows_question, role, characters of its text, whether it has a context key] in rank order (one
// record instead of a hundred: decoding records dominated).
CALL db.index.vector.queryNodes($index, $fetch, $vector) YIELD node AS t, score
WHERE t.namespace = $namespace AND ($as_of IS NULL OR t.ts <= $as_of)
WITH t, round(score, 6) AS score
ORDER BY score DESC, t.id
LIMIT $k
RETURN collect([t.id, t.session_id, t.idx, t.speaker, t.ts.epochSeconds * 1000000 + t.ts.microsecond, score,
                coalesce(t.follows_question, false), t.role, size(t.text),
                t.context_text IS NOT NULL]) AS rows
