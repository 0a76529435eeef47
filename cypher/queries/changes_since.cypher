// `changes`: every fact and relationship slot with an event recorded since $since (at most $limit
// slots, latest first), with all of its events (what each did is the replay's, computed by the
// caller), and the corrections invalidated since then with the similarity that decided it.
CALL () {
  MATCH (ev:FactEvent)
  WHERE ev.namespace = $namespace AND ev.recorded_at >= $since
  MATCH (slot:FactSlot)-[:HAS_EVENT]->(ev)
  RETURN 'fact' AS kind, slot, max(ev.recorded_at) AS latest
  UNION
  MATCH (ev:RelationEvent)
  WHERE ev.namespace = $namespace AND ev.recorded_at >= $since
  MATCH (slot:RelationSlot)-[:HAS_EVENT]->(ev)
  RETURN 'relationship' AS kind, slot, max(ev.recorded_at) AS latest
}
WITH kind, slot, latest
ORDER BY latest DESC
LIMIT $limit
MATCH (slot)-[:ABOUT]->(e:Entity)
RETURN kind, e.name AS subject, slot {.subject_key, .predicate, .subject_id, .relation} AS slot,
       COLLECT { MATCH (slot)-[:HAS_EVENT]->(x) RETURN x {.*} } AS events, [] AS corrections
UNION ALL
MATCH (c:Correction)
WHERE c.namespace = $namespace AND c.invalidated_at >= $since
OPTIONAL MATCH (w:Correction {id: c.invalidated_by})
WITH c, w, COLLECT { MATCH (w)-[l:LINK]->(c) RETURN l.similarity UNION MATCH (c)-[l:LINK]->(w) RETURN l.similarity
                   } AS similarities
WITH c, w, head(similarities) AS similarity
ORDER BY c.invalidated_at DESC
LIMIT $limit
RETURN 'correction' AS kind, null AS subject, null AS slot, [] AS events,
       collect(c {.id, .rule_text, .invalidated_at, .invalidated_reason, .invalidated_by, .trust, .extractor,
                  by_text: w.rule_text, similarity: similarity}) AS corrections
