// One page of a namespace's relationships for `kg export`: those leaving the next $limit nodes of
// one label ($label), in element-id order from the cursor $after, for another node of the namespace
// with a label of memory ($labels); one list, an entry per node with its relationships in `edges`.
// $only as in export/nodes. Paging the start nodes, not the relationships, reads each relationship once.
// Each label is a branch of its own with the label written out, so the page seeks the label's index
// on the namespace (the other branches unwind nothing and read nothing; the hints keep the seek
// whatever the statistics say); a node without a label of memory (a job, a lock) is in none. The
// slots and name keys are sought by their uniqueness constraint (namespace first, their identity
// always set), the events by (namespace, recorded_at): every event has its transaction time.
CALL () {
  UNWIND [label IN [$label] WHERE label = 'Session'] AS label
  MATCH (n:Session) USING INDEX n:Session(namespace)
    WHERE n.namespace = $namespace
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'Turn'] AS label
  MATCH (n:Turn) USING INDEX n:Turn(namespace)
    WHERE n.namespace = $namespace
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'Summary'] AS label
  MATCH (n:Summary) USING INDEX n:Summary(namespace)
    WHERE n.namespace = $namespace
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'Entity'] AS label
  MATCH (n:Entity) USING INDEX n:Entity(namespace)
    WHERE n.namespace = $namespace
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'EntityName'] AS label
  MATCH (n:EntityName) USING INDEX n:EntityName(namespace)
    WHERE n.namespace = $namespace
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'NameKey'] AS label
  MATCH (n:NameKey) USING INDEX n:NameKey(namespace, type, key)
    WHERE n.namespace = $namespace AND n.type IS NOT NULL AND n.key IS NOT NULL
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'Identifier'] AS label
  MATCH (n:Identifier) USING INDEX n:Identifier(namespace, kind, value)
    WHERE n.namespace = $namespace AND n.kind IS NOT NULL AND n.value IS NOT NULL
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'FactSlot'] AS label
  MATCH (n:FactSlot) USING INDEX n:FactSlot(namespace, subject_key, predicate)
    WHERE n.namespace = $namespace AND n.subject_key IS NOT NULL AND n.predicate IS NOT NULL
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'Fact'] AS label
  MATCH (n:Fact) USING INDEX n:Fact(namespace)
    WHERE n.namespace = $namespace
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'FactEvent'] AS label
  MATCH (n:FactEvent) USING INDEX n:FactEvent(namespace, recorded_at)
    WHERE n.namespace = $namespace AND n.recorded_at IS NOT NULL
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'RelationSlot'] AS label
  MATCH (n:RelationSlot) USING INDEX n:RelationSlot(namespace, subject_id, relation)
    WHERE n.namespace = $namespace AND n.subject_id IS NOT NULL AND n.relation IS NOT NULL
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'RelationEvent'] AS label
  MATCH (n:RelationEvent) USING INDEX n:RelationEvent(namespace, recorded_at)
    WHERE n.namespace = $namespace AND n.recorded_at IS NOT NULL
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'Correction'] AS label
  MATCH (n:Correction) USING INDEX n:Correction(namespace)
    WHERE n.namespace = $namespace
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'CorrectionCluster'] AS label
  MATCH (n:CorrectionCluster) USING INDEX n:CorrectionCluster(namespace)
    WHERE n.namespace = $namespace
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'Decision'] AS label
  MATCH (n:Decision) USING INDEX n:Decision(namespace)
    WHERE n.namespace = $namespace
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'StoreItem'] AS label
  MATCH (n:StoreItem) USING INDEX n:StoreItem(namespace)
    WHERE n.namespace = $namespace
  RETURN n
  UNION ALL
  UNWIND [label IN [$label] WHERE label = 'Erasure'] AS label
  MATCH (n:Erasure) USING INDEX n:Erasure(namespace)
    WHERE n.namespace = $namespace
  RETURN n
}
WITH n AS a WHERE elementId(a) > $after AND ($only IS NULL OR elementId(a) IN $only)
WITH a ORDER BY elementId(a) LIMIT $limit
RETURN collect({start: elementId(a), edges: COLLECT {
  MATCH (a)-[r]->(b)
  WHERE b.namespace = $namespace AND ($only IS NULL OR elementId(b) IN $only)
    AND any(label IN labels(b) WHERE label IN $labels)
  RETURN {ref: elementId(r), type: type(r), end: elementId(b), props: properties(r)} AS edge
  ORDER BY edge.ref
}}) AS page
