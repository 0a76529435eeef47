// What the facts of one namespace hold: nodes per label and links per type (tests, benchmarks).
CALL () { MATCH (f:Fact) WHERE f.namespace = $namespace
          RETURN count(f) AS facts, count(f.expired_at) AS expired }
CALL () { MATCH (e:FactEvent) WHERE e.namespace = $namespace RETURN count(e) AS events }
CALL () { MATCH (s:FactSlot) WHERE s.namespace = $namespace RETURN count(s) AS slots }
CALL () { MATCH (e:Entity) WHERE e.namespace = $namespace RETURN count(e) AS entities }
CALL () { MATCH (f:Fact)-[r:SUPERSEDES]->() WHERE f.namespace = $namespace RETURN count(r) AS supersedes }
CALL () { MATCH (f:Fact)-[r:EVIDENCED_BY]->() WHERE f.namespace = $namespace RETURN count(r) AS fact_evidence }
CALL () { MATCH (e:FactEvent)-[r:EVIDENCED_BY]->() WHERE e.namespace = $namespace
          RETURN count(r) AS event_evidence }
CALL () { MATCH (f:Fact)-[:SUBJECT|OBJECT|SUPERSEDES|EVIDENCED_BY]-(m) WHERE f.namespace = $namespace
            AND (m.namespace IS NULL OR m.namespace <> $namespace)
          RETURN count(m) AS foreign_neighbours }
RETURN facts, expired, events, slots, entities, supersedes, fact_evidence, event_evidence, foreign_neighbours
