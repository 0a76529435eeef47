// For `kg reembed`'s progress bar: how many vectors each embedded property holds.
CALL () { MATCH (t:Turn) RETURN count(t) AS turns, count(t.context_text) AS turn_contexts }
CALL () { MATCH (s:Summary) RETURN count(s) AS summaries }
CALL () { MATCH (c:Correction) RETURN count(c) AS corrections }
CALL () { MATCH (n:EntityName) WHERE n.text IS NOT NULL RETURN count(n) AS entity_names }
RETURN turns, turn_contexts, summaries, corrections, entity_names
