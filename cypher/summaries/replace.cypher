// A new summary version in its slot: the current one (if any) is expired, kept, and linked from
// the new one by REPLACES; a rollup links the summaries it was made from by ROLLS_UP.
MATCH (s:Session {namespace: $namespace, id: $session_id})
OPTIONAL MATCH (old:Summary)-[:SUMMARIZES]->(s)
  WHERE old.slot = $props.slot AND old.expired_at IS NULL
WITH s, old
CREATE (n:Summary)
SET n = $props, n.namespace = $namespace, n.session_id = $session_id,
    n.version = coalesce(old.version, 0) + 1, n.created_at = $now
SET n.id = $id_prefix + '-v' + toString(n.version)
SET old.expired_at = $now
CREATE (n)-[:SUMMARIZES]->(s)
WITH n, old
FOREACH (x IN CASE WHEN old IS NULL THEN [] ELSE [old] END | CREATE (n)-[:REPLACES]->(x))
WITH n
CALL (n) {
  UNWIND $children AS child_id
  MATCH (c:Summary {id: child_id})
  CREATE (n)-[:ROLLS_UP]->(c)
}
WITH n
CALL db.create.setNodeVectorProperty(n, 'embedding', $embedding)
RETURN n {.*, embedding: null} AS summary
