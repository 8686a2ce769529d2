/**
 * Migration 1, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * Labs, API keys, users and tasks.
 */
export const foundation = {
  id: 1,
  name: "foundation",
  sql: `
CREATE TABLE labs (
  id text PRIMARY KEY,
  slug text NOT NULL UNIQUE,
  name text NOT NULL,
  plan text NOT NULL CHECK (plan IN ('free', 'pro', 'team')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  name text NOT NULL,
  prefix text NOT NULL,
  secret_hash text NOT NULL UNIQUE,
  scopes jsonb NOT NULL,
  created_by text NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX api_keys_created_by ON api_keys (created_by, created_at DESC, id DESC);
CREATE INDEX api_keys_created ON api_keys (created_at DESC, id DESC);

CREATE TABLE users (
  id text PRIMARY KEY,
  issuer text NOT NULL,
  subject text NOT NULL,
  name text,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  UNIQUE (issuer, subject)
);

CREATE TABLE tasks (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  title text NOT NULL,
  description text NOT NULL DEFAULT '',
  status text NOT NULL CHECK (status IN ('todo', 'in_progress', 'done', 'cancelled')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX tasks_lab_created ON tasks (lab_id, created_at DESC, id DESC);
`
}
