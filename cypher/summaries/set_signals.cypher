// The signals of passes 2 and 3 on a session summary (JSON: a property holds no list of maps);
// pass 3's quality replaces the session call's when it gave one.
MATCH (sm:Summary {namespace: $namespace, id: $id})
SET sm.signals = $signals, sm.quality = coalesce($quality, sm.quality)
RETURN sm {.*, embedding: null} AS summary
