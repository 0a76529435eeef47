// `changes`: every fact and relationship slot with an event recorded since $since (at most $limit
// slots, latest first), with all of its events (what each did is the replay's, computed by the
// caller), the corrections invalidated since then with the similarity that decided it, and the
// untrusted mentions of trusted entities held since then (merges waiting for `confirm`).
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
       COLLECT { MATCH (slot)-[:HAS_EVENT]->(x) RETURN x {.*} } AS events, [] AS corrections, [] AS merges
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
                  by_text: w.rule_text, similarity: similarity}) AS corrections, [] AS merges
UNION ALL
MATCH (t:Turn {namespace: $namespace})-[m:MENTIONS]->(e:Entity)
WHERE m.held IS NOT NULL AND m.extracted_at >= $since
WITH m.held AS id, e, min(m.extracted_at) AS held_at, head(collect(m.surface)) AS surface,
     head(collect(m.session_id)) AS session_id
ORDER BY held_at DESC
LIMIT $limit
RETURN 'merge' AS kind, null AS subject, null AS slot, [] AS events, [] AS corrections,
       collect({id: id, entity_id: e.id, entity: e.name, surface: surface, session_id: session_id,
                held_at: held_at}) AS merges
