// What one namespace holds (tests and `kg status --namespace`).
CALL () { MATCH (s:Session) WHERE s.namespace = $namespace RETURN count(s) AS sessions }
CALL () { MATCH (t:Turn) WHERE t.namespace = $namespace
          RETURN count(t) AS turns, count(t.embedding) AS embedded }
CALL () { MATCH (:Session {namespace: $namespace})-[r:HAS_TURN]->() RETURN count(r) AS has_turn }
CALL () { MATCH (t:Turn)-[r:NEXT]->() WHERE t.namespace = $namespace RETURN count(r) AS next }
RETURN sessions, turns, has_turn, next, embedded
