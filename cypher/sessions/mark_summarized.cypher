// Sessions summarized up to a turn count: $sessions is a list of {namespace, id, count, version,
// speakers}.
UNWIND $sessions AS key
MATCH (s:Session {namespace: key.namespace, id: key.id})
SET s.summarized_count = key.count, s.summarized_at = $now, s.summary_version = key.version,
    s.speakers = key.speakers
