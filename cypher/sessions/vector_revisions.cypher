// Where a write left the vector revision of the sessions it touched ([namespace, id] pairs), read in its
// own transaction: the in-memory vector cache (queries.vectors) takes the turns just written at that
// revision instead of reloading the session.
UNWIND $sessions AS row
MATCH (s:Session {namespace: row[0], id: row[1]})
RETURN s.namespace AS namespace, s.id AS id, coalesce(s.vectors_rev, 0) AS revision,
       s.vectors_at.epochMillis AS changed
