// Package grantpg is the PostgreSQL grant.Store, for many coordinators
// sharing one set of spent grants and revocations. A spend is one INSERT ...
// ON CONFLICT DO NOTHING that also checks the revocations, so the primary
// key (issuer, jti) decides between any number of concurrent spenders, and
// the commit (synchronous_commit as the server sets it; on by default) makes
// it durable before it is acknowledged. Open applies the embedded
// migrations (migrations/NNNN_*.sql, recorded with their checksums in
// grant_schema_migrations) under an advisory lock.
package grantpg
