// One page of `kg export`'s nodes (docs/export.md): the nodes of $refs (element ids of export/refs,
// one label's, in order), as one list (read as the driver decodes it: a per-value pass over every
// vector's numbers cost more than the query). A node deleted since export/refs read it is left out.
UNWIND $refs AS ref
MATCH (n) WHERE elementId(n) = ref
RETURN collect({ref: ref, labels: labels(n), props: properties(n)}) AS page
