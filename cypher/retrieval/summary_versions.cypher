// Every summary version of a namespace, for BM25 with the namespace's own statistics (queries.vectors):
// one row whose `rows` lists [id, session_id, current, started_at in epoch µs]; texts are read once per
// id (retrieval/summary_texts: a version's text never changes, a new text is a new version).
MATCH (sm:Summary)
WHERE sm.namespace = $namespace
RETURN collect([sm.id, sm.session_id, sm.expired_at IS NULL,
                sm.started_at.epochSeconds * 1000000 + sm.started_at.microsecond]) AS rows
