/** The pods tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
CREATE TABLE pods (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  name text NOT NULL,
  gpu text,
  gpu_count integer NOT NULL,
  cost_per_hour double precision NOT NULL,
  currency text NOT NULL,
  provider text NOT NULL,
  provider_ref text,
  desired_status text NOT NULL CHECK (desired_status IN ('running', 'stopped')),
  status text NOT NULL CHECK (status IN ('stopped', 'starting', 'running', 'stopping', 'failed')),
  exit_code integer,
  last_error text,
  last_seen_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX pods_lab_created ON pods (lab_id, created_at DESC, id DESC);
CREATE INDEX pods_active ON pods (status) WHERE status IN ('starting', 'running', 'stopping');

-- one row per stretch of running; kept when the pod is deleted, so past costs stay
CREATE TABLE pod_sessions (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  pod_id text NOT NULL,
  pod_name text NOT NULL,
  cost_per_hour double precision NOT NULL,
  currency text NOT NULL,
  started_at timestamptz NOT NULL,
  stopped_at timestamptz,
  created_at timestamptz NOT NULL,
  CHECK (stopped_at IS NULL OR stopped_at >= started_at)
);
CREATE INDEX pod_sessions_pod ON pod_sessions (pod_id, started_at);
CREATE INDEX pod_sessions_lab_time ON pod_sessions (lab_id, started_at);
CREATE UNIQUE INDEX pod_sessions_one_open ON pod_sessions (pod_id) WHERE stopped_at IS NULL;
`
