/**
 * Migration 2, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * A lab's files, its repository link, the outbox of writes to push, webhook deliveries seen, and the activity feed.
 */
export const filesAndGitSync = {
  id: 2,
  name: "files and git sync",
  sql: `
CREATE TABLE files (
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  path text COLLATE "C" NOT NULL,
  content text NOT NULL,
  size integer NOT NULL,
  sha text NOT NULL,
  source text NOT NULL CHECK (source IN ('git', 'api')),
  from_git boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (lab_id, path)
);

CREATE TABLE lab_repos (
  lab_id text PRIMARY KEY REFERENCES labs (id) ON DELETE CASCADE,
  repo text NOT NULL,
  repo_key text NOT NULL,
  default_branch text NOT NULL,
  auto_push boolean NOT NULL,
  token_sealed text,
  webhook_secret_sealed text,
  last_sync_at timestamptz,
  last_sync_sha text,
  last_error text,
  last_error_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX lab_repos_repo_key ON lab_repos (repo_key);

CREATE TABLE outbox (
  id bigserial PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  path text COLLATE "C" NOT NULL,
  content text,
  actor text NOT NULL,
  created_at timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  last_error text
);
CREATE INDEX outbox_lab ON outbox (lab_id, id);

CREATE TABLE webhook_deliveries (
  host text NOT NULL,
  delivery_id text NOT NULL,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (host, delivery_id, lab_id)
);

CREATE TABLE activity (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  kind text NOT NULL,
  ref text,
  message text NOT NULL,
  actor text NOT NULL,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX activity_lab_created ON activity (lab_id, created_at DESC, id DESC);
`
}
