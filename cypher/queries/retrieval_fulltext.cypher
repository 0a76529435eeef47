// BM25 over the turn fulltext index $index (turn_text | turn_context_text) inside one namespace; $query is
// escaped Lucene scoped to the namespace by queries.turns.scoped, never raw user text.
// One row whose `rows` lists [id, session_id, idx, speaker, ts in epoch ms, score, follows_question] in rank
// order (one record instead of a hundred: decoding records dominated the query's time).
CALL db.index.fulltext.queryNodes($index, $query) YIELD node AS t, score
WHERE score > 0 AND t.namespace = $namespace AND ($as_of IS NULL OR t.ts <= $as_of)  // score 0: only the namespace clause matched
WITH t, score
LIMIT $k
RETURN collect([t.id, t.session_id, t.idx, t.speaker, t.ts.epochMillis, score, coalesce(t.follows_question, false)]) AS rows
