// Facts over time: identities of facts, their events, entities, and the per-subject+predicate slot
// whose lock serializes fact writers. Entity keys are not unique: the dedup resolver may later keep
// two entities of one name apart.
CREATE CONSTRAINT fact_id IF NOT EXISTS FOR (f:Fact) REQUIRE f.id IS UNIQUE;
CREATE CONSTRAINT fact_event_id IF NOT EXISTS FOR (e:FactEvent) REQUIRE e.id IS UNIQUE;
CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (e:Entity) REQUIRE e.id IS UNIQUE;
CREATE CONSTRAINT fact_slot_key IF NOT EXISTS FOR (s:FactSlot) REQUIRE (s.namespace, s.subject_key, s.predicate) IS UNIQUE;
CREATE INDEX entity_namespace_key IF NOT EXISTS FOR (e:Entity) ON (e.namespace, e.key);
CREATE INDEX fact_namespace_predicate IF NOT EXISTS FOR (f:Fact) ON (f.namespace, f.predicate);
CREATE INDEX fact_expired_at IF NOT EXISTS FOR (f:Fact) ON (f.expired_at);
CREATE INDEX fact_recorded_at IF NOT EXISTS FOR (f:Fact) ON (f.recorded_at);
CREATE INDEX fact_valid_from IF NOT EXISTS FOR (f:Fact) ON (f.valid_from);
