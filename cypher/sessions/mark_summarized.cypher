MATCH (s:Session {namespace: $namespace, id: $session_id})
SET s.summarized_count = $count, s.summarized_at = $now, s.summary_version = $version,
    s.speakers = $speakers
