// The fields the summary fulltext index holds (text, keywords) of some summary versions, by id.
MATCH (sm:Summary)
WHERE sm.namespace = $namespace AND sm.id IN $ids
RETURN collect([sm.id, sm.text, sm.keywords]) AS rows
