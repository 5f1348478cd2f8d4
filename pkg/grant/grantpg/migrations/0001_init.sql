-- dome grant store (pkg/grant/grantpg): spent single-use grants and
-- revocations, per issuer. Applied once by grantpg.Open, inside a
-- transaction, under an advisory lock.

CREATE TABLE grant_spends (
    issuer       text        NOT NULL,
    jti          text        NOT NULL,
    profile_id   text        NOT NULL,
    grant_digest text        NOT NULL DEFAULT '',  -- sha256:<hex> of the grant's bytes
    method       text        NOT NULL DEFAULT '',  -- the write that spent it
    expires_at   timestamptz NOT NULL,             -- the grant's: Prune drops the row after it
    spent_at     timestamptz NOT NULL,
    PRIMARY KEY (issuer, jti)                      -- decides between concurrent spenders
);
CREATE INDEX grant_spends_expires_at ON grant_spends (expires_at);

CREATE TABLE grant_revocations (
    issuer     text        NOT NULL,
    kind       text        NOT NULL CHECK (kind IN ('jti', 'profile_id')),
    value      text        NOT NULL,
    reason     text        NOT NULL DEFAULT '',
    until      timestamptz NOT NULL,
    revoked_at timestamptz NOT NULL,
    PRIMARY KEY (issuer, kind, value)
);
CREATE INDEX grant_revocations_until ON grant_revocations (until);
