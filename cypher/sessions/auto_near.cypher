// The automatic sessions of a namespace (named `s-<first timestamp>Z` by ingest.sessions) whose span
// comes within the gap of a batch's messages: the ones a late or bridging message can extend or join.
MATCH (s:Session {namespace: $namespace})
WHERE s.started_at <= $hi AND s.ended_at >= $lo AND s.id =~ 's-[0-9]{8}T[0-9]{6}(\\.[0-9]{3})?Z'
RETURN s.id AS id, s.started_at AS started_at, s.ended_at AS ended_at
ORDER BY s.started_at
