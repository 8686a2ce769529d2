/** The experiments tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
CREATE TABLE experiment_templates (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  params_schema jsonb NOT NULL,
  defaults jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX experiment_templates_lab_created ON experiment_templates (lab_id, created_at DESC, id DESC);

CREATE TABLE experiment_queues (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (lab_id, name)
);
CREATE INDEX experiment_queues_lab_created ON experiment_queues (lab_id, created_at DESC, id DESC);

CREATE TABLE experiments (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  hypothesis text NOT NULL DEFAULT '',
  params jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('draft', 'queued', 'running', 'completed', 'failed', 'cancelled')),
  status_message text,
  template_id text REFERENCES experiment_templates (id) ON DELETE SET NULL,
  queue_id text REFERENCES experiment_queues (id) ON DELETE SET NULL,
  pod_id text,
  project_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  queued_at timestamptz,
  started_at timestamptz,
  finished_at timestamptz
);
CREATE INDEX experiments_lab_created ON experiments (lab_id, created_at DESC, id DESC);
-- the scheduler's FIFO: queued experiments by the time they were queued
CREATE INDEX experiments_queued ON experiments (lab_id, queued_at, id) WHERE status = 'queued';
CREATE INDEX experiments_queue ON experiments (queue_id) WHERE status IN ('queued', 'running');
-- a pod runs one experiment at a time
CREATE UNIQUE INDEX experiments_one_running_per_pod ON experiments (pod_id) WHERE status = 'running';

CREATE TABLE experiment_metrics (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  experiment_id text NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  key text NOT NULL,
  value double precision NOT NULL,
  step bigint,
  measured_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX experiment_metrics_key ON experiment_metrics (experiment_id, key, seq);
CREATE INDEX experiment_metrics_all ON experiment_metrics (experiment_id, seq);

CREATE TABLE experiment_costs (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  experiment_id text NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  amount double precision NOT NULL CHECK (amount >= 0),
  currency text NOT NULL,
  category text NOT NULL CHECK (category IN ('compute', 'api', 'storage')),
  source text NOT NULL,
  description text NOT NULL DEFAULT '',
  origin text NOT NULL CHECK (origin IN ('manual', 'pod')),
  incurred_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX experiment_costs_lab_created ON experiment_costs (lab_id, created_at DESC, id DESC);
CREATE INDEX experiment_costs_lab_incurred ON experiment_costs (lab_id, incurred_at);
CREATE INDEX experiment_costs_experiment ON experiment_costs (experiment_id);
`
