// BM25 over the turn fulltext index $index (turn_key_text | turn_context_text) inside one namespace; $query is
// escaped Lucene scoped to the namespace by queries.turns.scoped (unless it is the index's only
// tenant), never raw user text; the WHERE checks the namespace either way.
// $options: {limit: n}, Lucene's n best hits (queries.candidates asks again with {} when that bound may
// have cut into the top $k: `raw` hits came back, the last scoring `floor`), or {} for every hit.
// One row whose `rows` lists [id, session_id, idx, speaker, ts in epoch µs, score,
// follows_question, role, characters of its text, whether it has a context key] in rank order (one
// record instead of a hundred: decoding records dominated).
CALL db.index.fulltext.queryNodes($index, $query, $options) YIELD node, score
WITH count(*) AS raw, min(score) AS floor, collect([node, score]) AS found
CALL (found) {
  UNWIND found AS hit
  WITH hit[0] AS t, hit[1] AS score
  // score 0: only the namespace clause matched
  WHERE score > 0 AND t.namespace = $namespace AND ($as_of IS NULL OR t.ts <= $as_of)
  WITH t, score
  ORDER BY score DESC, t.id
  LIMIT $k
  RETURN collect([t.id, t.session_id, t.idx, t.speaker, t.ts.epochSeconds * 1000000 + t.ts.microsecond, score,
                  coalesce(t.follows_question, false), t.role, size(t.text),
                  t.context_text IS NOT NULL]) AS rows
}
RETURN raw, floor, rows
