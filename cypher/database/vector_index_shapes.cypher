// The vector indexes as they are: the properties each carries and its options (whether it is
// quantized), compared by `Store.ensure_vector_indexes` with the schema files' forms.
SHOW VECTOR INDEXES YIELD name, properties, options
RETURN name, properties, options.indexConfig AS config
