// A namespace's summary versions in four numbers, [versions, expired ones, the latest made and the
// latest expired in epoch ms]: a new version, an expiry and a deletion each move it. The in-memory
// cache (queries.vectors) reads this before each search and reads retrieval/summary_versions only
// when it moved.
MATCH (sm:Summary)
WHERE sm.namespace = $namespace
RETURN [count(sm), count(sm.expired_at), max(sm.created_at.epochMillis), max(sm.expired_at.epochMillis)] AS stamp
