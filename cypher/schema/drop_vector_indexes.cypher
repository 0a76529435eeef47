// Used by `kg reembed` before the embedder's dimension changes.
DROP INDEX turn_embedding IF EXISTS;
DROP INDEX correction_embedding IF EXISTS;
DROP INDEX entity_embedding IF EXISTS;
DROP INDEX turn_context_embedding IF EXISTS;
DROP INDEX summary_embedding IF EXISTS;
