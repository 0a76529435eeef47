// This run's clusters and their members.
UNWIND $clusters AS cl
CREATE (k:CorrectionCluster {id: cl.id, namespace: $namespace, label: cl.label, keyphrases: cl.keyphrases,
                             representative: cl.representative, created_at: $at})
WITH k, cl
UNWIND cl.member_ids AS member_id
MATCH (c:Correction {id: member_id})
CREATE (k)-[:HAS_MEMBER]->(c)
