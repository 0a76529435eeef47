// One page of `kg export`'s relationships: those leaving the nodes of $refs (element ids of
// export/refs, in order) for another node of the namespace with a label of memory ($labels); one list,
// an entry per node with its relationships in `edges`. $only as in export/refs. Paging the start
// nodes, not the relationships, reads each relationship once.
UNWIND $refs AS ref
MATCH (a) WHERE elementId(a) = ref
RETURN collect({start: ref, edges: COLLECT {
  MATCH (a)-[r]->(b)
  WHERE b.namespace = $namespace AND ($only IS NULL OR elementId(b) IN $only)
    AND any(label IN labels(b) WHERE label IN $labels)
  RETURN {ref: elementId(r), type: type(r), end: elementId(b), props: properties(r)} AS edge
  ORDER BY edge.ref
}}) AS page
