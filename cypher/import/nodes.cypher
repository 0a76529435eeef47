// `kg import ndjson`: one batch of exported nodes into $namespace. A node already there (same first
// label, same identity: the keys of the label's uniqueness constraint, kg.core.models.export.IDENTITY)
// is kept as it is, so importing a file twice writes nothing. Each label's rows are looked up in a
// branch of their own with the label written out, so the planner seeks the label's uniqueness index
// (a label given as a value, `MATCH (n:$(row.label))`, is answered by scanning every node of the
// label, for each row); the hints keep that seek when the statistics would prefer another index.
// row.label is one of these labels: the import refuses the others before it writes.
// A vector (row.vectors) is stored as the writers store it (a float32 vector property). Returns each
// row's node, found or created, for the relationships that follow.
CALL () {
  UNWIND [row IN $rows WHERE row.label = 'Session'] AS row
  OPTIONAL MATCH (n:Session {namespace: $namespace, id: row.props.id})
    USING INDEX n:Session(namespace, id)
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'Turn'] AS row
  OPTIONAL MATCH (n:Turn {id: row.props.id}) USING INDEX n:Turn(id)
    WHERE n.namespace = $namespace
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'Summary'] AS row
  OPTIONAL MATCH (n:Summary {id: row.props.id}) USING INDEX n:Summary(id)
    WHERE n.namespace = $namespace
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'Entity'] AS row
  OPTIONAL MATCH (n:Entity {id: row.props.id}) USING INDEX n:Entity(id)
    WHERE n.namespace = $namespace
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'EntityName'] AS row
  OPTIONAL MATCH (n:EntityName {id: row.props.id}) USING INDEX n:EntityName(id)
    WHERE n.namespace = $namespace
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'NameKey'] AS row
  OPTIONAL MATCH (n:NameKey {namespace: $namespace, type: row.props.type, key: row.props.key})
    USING INDEX n:NameKey(namespace, type, key)
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'Identifier'] AS row
  OPTIONAL MATCH (n:Identifier {namespace: $namespace, kind: row.props.kind, value: row.props.value})
    USING INDEX n:Identifier(namespace, kind, value)
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'FactSlot'] AS row
  OPTIONAL MATCH (n:FactSlot {namespace: $namespace, subject_key: row.props.subject_key, predicate: row.props.predicate})
    USING INDEX n:FactSlot(namespace, subject_key, predicate)
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'Fact'] AS row
  OPTIONAL MATCH (n:Fact {id: row.props.id}) USING INDEX n:Fact(id)
    WHERE n.namespace = $namespace
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'FactEvent'] AS row
  OPTIONAL MATCH (n:FactEvent {id: row.props.id}) USING INDEX n:FactEvent(id)
    WHERE n.namespace = $namespace
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'RelationSlot'] AS row
  OPTIONAL MATCH (n:RelationSlot {namespace: $namespace, subject_id: row.props.subject_id, relation: row.props.relation})
    USING INDEX n:RelationSlot(namespace, subject_id, relation)
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'RelationEvent'] AS row
  OPTIONAL MATCH (n:RelationEvent {id: row.props.id}) USING INDEX n:RelationEvent(id)
    WHERE n.namespace = $namespace
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'Correction'] AS row
  OPTIONAL MATCH (n:Correction {id: row.props.id}) USING INDEX n:Correction(id)
    WHERE n.namespace = $namespace
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'CorrectionCluster'] AS row
  OPTIONAL MATCH (n:CorrectionCluster {id: row.props.id}) USING INDEX n:CorrectionCluster(id)
    WHERE n.namespace = $namespace
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'Decision'] AS row
  OPTIONAL MATCH (n:Decision {id: row.props.id}) USING INDEX n:Decision(id)
    WHERE n.namespace = $namespace
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'StoreItem'] AS row
  OPTIONAL MATCH (n:StoreItem {id: row.props.id}) USING INDEX n:StoreItem(id)
    WHERE n.namespace = $namespace
  RETURN row, n AS found
  UNION ALL
  UNWIND [row IN $rows WHERE row.label = 'Erasure'] AS row
  OPTIONAL MATCH (n:Erasure {id: row.props.id}) USING INDEX n:Erasure(id)
    WHERE n.namespace = $namespace
  RETURN row, n AS found
}
CALL (row, found) {
  OPTIONAL CALL (row, found) {
    WITH row WHERE found IS NULL
    CREATE (m:$(row.labels))
    SET m = row.props, m.namespace = $namespace
    WITH m, row
    CALL (m, row) {
      UNWIND keys(row.vectors) AS key
      CALL db.create.setNodeVectorProperty(m, key, row.vectors[key])
    }
    RETURN m
  }
  RETURN coalesce(found, m) AS node
}
RETURN row.ref AS ref, elementId(node) AS node, found IS NULL AS created
