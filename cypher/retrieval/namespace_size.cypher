// Turns in a namespace, from its sessions' counters (cheaper than counting turns), and turns in the whole
// database (the count store answers that at once): the namespace's share of the vector indexes.
MATCH (s:Session)
WHERE s.namespace = $namespace AND s.started_at IS NOT NULL
WITH coalesce(sum(s.message_count), 0) AS turns
CALL {
  MATCH (t:Turn)
  RETURN count(t) AS total
}
RETURN turns, total
