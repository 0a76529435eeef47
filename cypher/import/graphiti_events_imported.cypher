// Fact events an earlier Graphiti import wrote into a namespace (a re-import skips them).
MATCH (e:FactEvent)
WHERE e.namespace = $namespace AND e.extractor = 'graphiti'
RETURN e.subject_key AS subject_key, e.predicate AS predicate, e.op AS op, e.object_value AS object_value,
       e.recorded_at AS recorded_at
