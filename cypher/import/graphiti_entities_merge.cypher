// Entities imported from Graphiti: merged by the id `remember` derives from the name, so facts
// written afterwards meet them. Keeps the Graphiti uuids they came from and a summary if none yet.
UNWIND $entities AS row
MERGE (e:Entity {id: row.id})
  ON CREATE SET e.namespace = $namespace, e.key = row.key, e.name = row.name, e.type = row.type,
                e.created_at = row.created_at
SET e.summary = coalesce(e.summary, row.summary),
    e.graphiti_uuids = CASE WHEN row.uuid IN coalesce(e.graphiti_uuids, []) THEN e.graphiti_uuids
                            ELSE coalesce(e.graphiti_uuids, []) + row.uuid END
FOREACH (_ IN CASE WHEN e.type = 'other' AND row.type <> 'other' THEN [1] ELSE [] END | SET e.type = row.type)
