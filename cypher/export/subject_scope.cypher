// The nodes a subject-scoped export holds (a data-access request): the subject's entities, what
// touches them (names, identifiers, fact slots, the other ends of relationships, mentioning turns),
// what touches their fact slots (facts, fact events), and what those point to (evidence turns,
// object entities).
MATCH (e:Entity {namespace: $namespace, key: $key})
OPTIONAL MATCH (e)--(near) WHERE near.namespace = $namespace
OPTIONAL MATCH (e)<-[:ABOUT]-(:FactSlot)--(far) WHERE far.namespace = $namespace
OPTIONAL MATCH (far)-->(farther) WHERE farther.namespace = $namespace AND NOT farther:FactSlot
WITH collect(DISTINCT elementId(e)) + collect(DISTINCT elementId(near)) + collect(DISTINCT elementId(far))
     + collect(DISTINCT elementId(farther)) AS refs
UNWIND refs AS ref
RETURN DISTINCT ref
