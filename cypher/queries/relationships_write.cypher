// (Entity)-[:RELATES_TO]->(Entity), one per namespace+ends+relation (deterministic id), with the
// facts' four timestamps: valid_from (the earliest evidence turn), valid_to, recorded_at (first
// written), expired_at. An end that is not a resolved entity is named like a fact subject.
UNWIND $rows AS row
MERGE (a:Entity {id: row.from.id})
  ON CREATE SET a.namespace = $namespace, a.key = row.from.key, a.name = row.from.name, a.type = 'other',
                a.created_at = $now
MERGE (b:Entity {id: row.to.id})
  ON CREATE SET b.namespace = $namespace, b.key = row.to.key, b.name = row.to.name, b.type = 'other',
                b.created_at = $now
MERGE (a)-[r:RELATES_TO {id: row.id}]->(b)
  ON CREATE SET r.namespace = $namespace, r.relation = row.relation, r.valid_from = row.valid_from,
                r.valid_to = null, r.recorded_at = $now, r.expired_at = null, r.evidence = [], r.sessions = []
SET r.valid_from = CASE WHEN row.valid_from < r.valid_from THEN row.valid_from ELSE r.valid_from END,
    r.evidence = r.evidence + [x IN row.evidence WHERE NOT x IN r.evidence],
    r.sessions = r.sessions + [x IN [$session_id] WHERE NOT x IN r.sessions],
    r += $stamp
RETURN count(r) AS written, sum(CASE WHEN r.recorded_at = $now THEN 1 ELSE 0 END) AS created
