UNWIND $sessions AS row
MATCH (s:Session {namespace: row.namespace, id: row.id})
SET s.message_count = row.message_count, s.last_turn_id = row.last_turn_id
