// Spelling neighbours of each probe: the fulltext index over entity name trigrams, scoped to the
// namespace+type by a required `search_scope` token in the query; names for re-ranking.
UNWIND $probes AS p
CALL (p) {
  CALL db.index.fulltext.queryNodes('entity_names', p.query, {limit: $fetch}) YIELD node
  RETURN collect({id: node.id, names: node.names}) AS hits
}
RETURN p.i AS i, hits
