// The element ids of a namespace's nodes of one label ($label, of kg.core.models.export.IDENTITY) for
// `kg export` (docs/export.md), in order, as one list: the export then reads them a page at a time
// (export/nodes, export/edges), each page by its ids. $only: the element ids of a subject-scoped
// export, or null for the whole namespace.
// Each label is a branch of its own with the label written out, so the read seeks the label's index
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
WITH elementId(n) AS ref WHERE $only IS NULL OR ref IN $only
WITH ref ORDER BY ref
RETURN collect(ref) AS refs
