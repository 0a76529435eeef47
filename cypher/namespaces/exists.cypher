// Does a namespace hold anything: a session, an entity or a correction (each an indexed lookup).
CALL () {
  MATCH (s:Session {namespace: $namespace}) RETURN 1 AS hit LIMIT 1
  UNION
  MATCH (e:Entity {namespace: $namespace}) RETURN 1 AS hit LIMIT 1
  UNION
  MATCH (c:Correction {namespace: $namespace}) RETURN 1 AS hit LIMIT 1
}
RETURN count(hit) > 0 AS exists
