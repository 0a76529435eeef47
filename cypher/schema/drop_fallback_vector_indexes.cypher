// Used when the fallback embedder's dimension changes and no fallback vector is left.
DROP INDEX turn_fallback_embedding IF EXISTS;
