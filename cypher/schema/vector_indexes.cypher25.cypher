// The vector indexes on a server with in-index filtering (Cypher 25 `SEARCH ... WHERE`, Neo4j 2026.02
// and later; kg.core.store.capabilities): each carries the namespace, and what `as_of` or the search
// filters on, so a tenant's query is answered from its own vectors inside the index (the
// `.cypher25` retrieval files). Unquantized: the server's default (binary quantization) kept 0.67 of
// a large tenant's exact top 10 here, unquantized 1.0 (docs/operations.md). A denser graph (m 32,
// ef_construction 200; the defaults are 16 and 100): among many near-duplicate vectors the default
// graph left 4% of a 13,740-turn tenant's turns unreachable by their own vector (k up to 2,000),
// this one none (docs/benchmarks.md, bench.tenants). `Store.ensure_vector_indexes` drops and
// rebuilds an index whose properties, quantization or graph settings differ from these.
CYPHER 25 CREATE VECTOR INDEX turn_embedding IF NOT EXISTS FOR (t:Turn) ON t.embedding WITH [t.namespace, t.ts]
  OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false,
    `vector.hnsw.m`: 32, `vector.hnsw.ef_construction`: 200}};
CYPHER 25 CREATE VECTOR INDEX correction_embedding IF NOT EXISTS FOR (c:Correction) ON c.embedding WITH [c.namespace]
  OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false,
    `vector.hnsw.m`: 32, `vector.hnsw.ef_construction`: 200}};
CYPHER 25 CREATE VECTOR INDEX entity_embedding IF NOT EXISTS FOR (n:EntityName) ON n.embedding WITH [n.namespace, n.type]
  OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false,
    `vector.hnsw.m`: 32, `vector.hnsw.ef_construction`: 200}};
CYPHER 25 CREATE VECTOR INDEX turn_context_embedding IF NOT EXISTS FOR (t:Turn) ON t.context_embedding WITH [t.namespace, t.ts]
  OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false,
    `vector.hnsw.m`: 32, `vector.hnsw.ef_construction`: 200}};
CYPHER 25 CREATE VECTOR INDEX summary_embedding IF NOT EXISTS FOR (s:Summary) ON s.embedding WITH [s.namespace, s.started_at]
  OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false,
    `vector.hnsw.m`: 32, `vector.hnsw.ef_construction`: 200}};
