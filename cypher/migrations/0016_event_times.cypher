// `changes(namespace, since)` reads the fact and relationship events recorded since a moment, and
// `revert` / `confirm` find an event by id (unique already, 0002 and 0009).
CREATE INDEX fact_event_recorded IF NOT EXISTS FOR (e:FactEvent) ON (e.namespace, e.recorded_at);
CREATE INDEX relation_event_recorded IF NOT EXISTS FOR (e:RelationEvent) ON (e.namespace, e.recorded_at);
CREATE INDEX correction_invalidated IF NOT EXISTS FOR (c:Correction) ON (c.namespace, c.invalidated_at);
