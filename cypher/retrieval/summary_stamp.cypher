// A namespace's summary versions in four numbers, [versions, expired ones, the latest made and the
// latest expired in epoch ms (-1: none)]: a new version, an expiry and a deletion each move it. The
// in-memory cache (queries.summary_terms) reads this before each search with the stamp it holds as
// $known; only when the stamp moved does the same read list every version as `rows` (else null),
// [id, session_id, current, started_at in epoch µs] each, for BM25 with the namespace's own
// statistics; texts are read once per id (retrieval/summary_texts: a version's text never changes, a
// new text is a new version).
MATCH (sm:Summary)
WHERE sm.namespace = $namespace
WITH [count(sm), count(sm.expired_at), coalesce(max(sm.created_at.epochMillis), -1),
      coalesce(max(sm.expired_at.epochMillis), -1)] AS stamp,
     collect([sm.id, sm.session_id, sm.expired_at IS NULL,
              sm.started_at.epochSeconds * 1000000 + sm.started_at.microsecond]) AS rows
RETURN stamp, CASE WHEN stamp = $known THEN null ELSE rows END AS rows
