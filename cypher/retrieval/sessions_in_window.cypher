// Sessions of a namespace whose time span meets [$start, $end] (a time expression of the query).
MATCH (s:Session)
WHERE s.namespace = $namespace AND s.started_at <= $end AND s.started_at IS NOT NULL AND s.ended_at >= $start
RETURN s.id AS session_id
LIMIT 200
