import * as agents from "../agents/Sql.js"
import * as backups from "../backups/Sql.js"
import * as chats from "../chats/Sql.js"
import * as contributions from "../contributions/Sql.js"
import * as datasets from "../datasets/Sql.js"
import * as experiments from "../experiments/Sql.js"
import * as figures from "../figures/Sql.js"
import * as knowledge from "../knowledge/Sql.js"
import * as memory from "../memory/Sql.js"
import * as papers from "../papers/Sql.js"
import * as pods from "../pods/Sql.js"
import * as projects from "../projects/Sql.js"
import * as search from "../search/Sql.js"
import * as standups from "../standups/Sql.js"
import * as surveys from "../surveys/Sql.js"
import * as telemetry from "../telemetry/Sql.js"
import { recordsQuota } from "./migrations/0010-records-quota.js"

/**
 * The schema, as an ordered list of migrations. Applied once each, in order, at
 * start (see Migrator.ts). Never edit a released migration: add a new one.
 */
export const migrations: ReadonlyArray<{ readonly id: number; readonly name: string; readonly sql: string }> = [
  {
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
  },
  {
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
  },
  {
    id: 3,
    name: "research resources",
    // each feature owns its tables; no foreign keys across features, so the order is free
    sql: [
      pods,
      experiments,
      papers,
      datasets,
      figures,
      agents,
      knowledge,
      memory,
      surveys,
      standups,
      projects,
      chats,
      telemetry,
      contributions,
      backups
    ]
      .map((feature) => feature.schema)
      .join("\n")
  },
  {
    id: 4,
    name: "search",
    // after every table it indexes
    sql: search.schema
  },
  {
    id: 5,
    name: "search queue",
    sql: search.queueSchema
  },
  {
    id: 6,
    name: "search queue: one version per statement",
    sql: search.queueVersionPerStatement
  },
  {
    id: 7,
    name: "sync link: token origin, outbox set-aside",
    // a stored token was given for its link's repository: bind it to that origin (scheme://host[:port]; the
    // service compares origins after parsing them, so case and default ports need no care here)
    sql: `
ALTER TABLE lab_repos ADD COLUMN token_origin text;
UPDATE lab_repos SET token_origin = substring(repo from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*')
  WHERE token_sealed IS NOT NULL;

ALTER TABLE outbox ADD COLUMN set_aside_at timestamptz;
ALTER TABLE outbox ADD COLUMN set_aside_reason text;
`
  },
  {
    id: 8,
    name: "quotas: per-lab stored bytes, keys by scope",
    sql: `-- bytes of each lab's files, kept by statement triggers in the writing transaction (stored-bytes quota);
-- a SUM over 50,000 files took 30-55 ms on PGlite, reading this row takes one index lookup
CREATE TABLE lab_usage (
  lab_id text PRIMARY KEY REFERENCES labs (id) ON DELETE CASCADE,
  file_bytes bigint NOT NULL DEFAULT 0
);
INSERT INTO lab_usage (lab_id, file_bytes)
SELECT l.id, COALESCE((SELECT sum(f.size) FROM files f WHERE f.lab_id = l.id), 0) FROM labs l;

CREATE FUNCTION lab_usage_files_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO lab_usage AS u (lab_id, file_bytes)
  SELECT n.lab_id, sum(n.size) FROM usage_new n GROUP BY n.lab_id
  ON CONFLICT (lab_id) DO UPDATE SET file_bytes = u.file_bytes + EXCLUDED.file_bytes;
  RETURN NULL;
END
$fn$;
CREATE FUNCTION lab_usage_files_updated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO lab_usage AS u (lab_id, file_bytes)
  SELECT d.lab_id, sum(d.bytes) FROM (
    SELECT n.lab_id, n.size::bigint AS bytes FROM usage_new n
    UNION ALL
    SELECT o.lab_id, -o.size::bigint FROM usage_old o
  ) d GROUP BY d.lab_id HAVING sum(d.bytes) <> 0
  ON CONFLICT (lab_id) DO UPDATE SET file_bytes = u.file_bytes + EXCLUDED.file_bytes;
  RETURN NULL;
END
$fn$;
CREATE FUNCTION lab_usage_files_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE lab_usage u SET file_bytes = u.file_bytes - d.bytes
  FROM (SELECT o.lab_id, sum(o.size) AS bytes FROM usage_old o GROUP BY o.lab_id) d
  WHERE u.lab_id = d.lab_id;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER lab_usage_inserted AFTER INSERT ON files
  REFERENCING NEW TABLE AS usage_new FOR EACH STATEMENT EXECUTE FUNCTION lab_usage_files_inserted();
CREATE TRIGGER lab_usage_updated AFTER UPDATE ON files
  REFERENCING OLD TABLE AS usage_old NEW TABLE AS usage_new FOR EACH STATEMENT EXECUTE FUNCTION lab_usage_files_updated();
CREATE TRIGGER lab_usage_deleted AFTER DELETE ON files
  REFERENCING OLD TABLE AS usage_old FOR EACH STATEMENT EXECUTE FUNCTION lab_usage_files_deleted();

-- the keys naming a lab (API-keys quota)
CREATE INDEX api_keys_scopes ON api_keys USING gin (scopes jsonb_path_ops);
`
  },
  {
    id: 9,
    name: "sync fidelity: pushes told apart after a lost answer, pending writes found by path",
    sql: `
-- the commit a push was about to move the branch to: set before the push, cleared with the entry when it lands,
-- so a push whose answer was lost (a crash, a cut connection) is told landed or not, and never made twice
ALTER TABLE outbox ADD COLUMN push_commit text;
-- a pull asks, path by path, whether a write waits to be pushed
CREATE INDEX outbox_lab_path ON outbox (lab_id, path) WHERE set_aside_at IS NULL;
`
  },
  recordsQuota
]
