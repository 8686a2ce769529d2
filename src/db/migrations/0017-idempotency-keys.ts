/**
 * Migration 17, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * The answers to writes sent with an `Idempotency-Key`, per credential, kept a day so a retried write is answered
 * again instead of done again. `status` is null while the first request runs; `fingerprint` tells a repeat of the
 * same request from a different request under the same key.
 */
export const idempotencyKeys = {
  id: 17,
  name: "idempotency keys: answers kept for retried writes",
  sql: `
CREATE TABLE idempotency_keys (
  credential text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  request text NOT NULL,
  status integer,
  content_type text,
  body bytea,
  body_bytes integer,
  started_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (credential, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
`
}
