// Relationships over time: the per-subject+type slot whose lock serializes relationship writers,
// and its events. Edge versions are (:Entity)-[:RELATES_TO]->(:Entity), unique by id (0006).
CREATE CONSTRAINT relation_slot_key IF NOT EXISTS FOR (s:RelationSlot) REQUIRE (s.namespace, s.subject_id, s.relation) IS UNIQUE;
CREATE CONSTRAINT relation_event_id IF NOT EXISTS FOR (e:RelationEvent) REQUIRE e.id IS UNIQUE;
CREATE INDEX relation_event_session IF NOT EXISTS FOR (e:RelationEvent) ON (e.namespace, e.session_id);
CREATE INDEX fact_event_session IF NOT EXISTS FOR (e:FactEvent) ON (e.namespace, e.session_id);
