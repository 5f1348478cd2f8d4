-- The action registry (seed action-registry-contract.md, "Data Model").
-- Applied once by actionpg.Open, inside a transaction, under an advisory lock.

CREATE TABLE actions (
    name       text        PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE action_versions (
    id                 bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name               text        NOT NULL REFERENCES actions (name),
    version            text        NOT NULL,
    -- The signed payload (the document without "hash", "signature" and
    -- "verified") for queries. jsonb does not keep bytes (it reorders keys,
    -- drops duplicates, rewrites numbers) and cannot hold \u0000: NULL for a
    -- payload with one. Never used for verification: see document.
    schema_json        jsonb,
    -- The published document exactly as published: its canonical (RFC 8785)
    -- bytes including "hash" and "signature". Reads return these bytes and a
    -- tamper check re-derives the hash from them.
    document           bytea       NOT NULL,
    hash               text        NOT NULL,  -- sha256:<hex> of the canonical payload
    sig_alg            text,                  -- the "signature" block, NULL when unsigned
    sig_kid            text,
    sig_b64            text,                  -- its "sig" exactly as in the document ("base64:...")
    -- The payload's "description", for listings; NULL when it holds a NUL
    -- character (text cannot), and then read from document.
    description        text        DEFAULT '',
    created_at         timestamptz NOT NULL DEFAULT now(),
    deprecated         boolean     NOT NULL DEFAULT false,
    deprecation_reason text,
    CONSTRAINT action_versions_name_version_key UNIQUE (name, version)
);

-- The unique (name, version) index also serves every lookup by name, its
-- leading column; this one serves lookups by version alone.
CREATE INDEX action_versions_version_idx ON action_versions (version);
