// Package actionpg is the PostgreSQL store of the action registry
// (action.Store), for deployments where several `dome serve` replicas share
// one database. Open connects with a pgx pool to a DATABASE_URL
// (postgres://, postgresql://, or postgresql+psycopg:// spelling)
// and applies the migrations embedded in the binary (migrations/NNNN_*.sql,
// recorded in schema_migrations with their checksums) under a PostgreSQL
// advisory lock, so replicas may start at once. The tables are the seed's:
// actions (name) and action_versions (unique (name, version), schema_json
// jsonb, hash, sig_alg, sig_kid, sig_b64, created_at, deprecated,
// deprecation_reason), plus the exact canonical document bytes (document
// bytea): jsonb does not keep bytes, and reads and tamper checks work on the
// bytes as published. A publish is one transaction that lets the unique
// constraint decide between concurrent publishers; the store verifies no
// signatures (action.Publish does, before storing) and prints nothing. Watch
// reports every committed change to action_versions, by anyone, through the
// trigger of migration 0002 and LISTEN/NOTIFY, so readers may cache.
package actionpg
