// The resolver's view of entities: names, keys, identifiers, attributes and their history.
UNWIND $ids AS id
MATCH (e:Entity {id: id})
WHERE e.keys IS NOT NULL
RETURN e {.id, .type, .name, .aliases, .names, .keys, .identifiers, .qualifiers, .attributes,
          .attribute_history, .mentions, .version} AS entity
