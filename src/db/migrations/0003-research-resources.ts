/**
 * Migration 3, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * The research resources' tables, one section per feature (pods, experiments, papers, datasets, figures, agents,
 * knowledge, memory, surveys, standups, projects, chats, telemetry, contributions, backups). No foreign keys across
 * features, so their order is free. Once composed from each feature's Sql.ts; that text is frozen here.
 */
import { agentsToBackups } from "./0003-research-resources-agents-to-backups.js"

export const researchResources = {
  id: 3,
  name: "research resources",
  // the text is long: its second half (agents to backups) stands in the file beside this one
  sql: `
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


CREATE TABLE papers (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  title text NOT NULL,
  abstract text NOT NULL DEFAULT '',
  authors jsonb NOT NULL,
  files jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('draft', 'submitted', 'in_review', 'revision_requested', 'accepted', 'published', 'withdrawn')),
  version integer NOT NULL,
  published_version integer,
  published_at timestamptz,
  loop_run_id text,
  loop_status text NOT NULL CHECK (loop_status IN ('idle', 'running', 'done', 'failed')),
  loop_steps jsonb NOT NULL,
  loop_started_by text,
  loop_started_at timestamptz,
  loop_finished_at timestamptz,
  loop_error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX papers_lab_created ON papers (lab_id, created_at DESC, id DESC);
CREATE INDEX papers_loop_running ON papers (id) WHERE loop_status = 'running';

-- published versions, frozen (no foreign key to papers: a paper with a published version is never deleted)
CREATE TABLE paper_versions (
  paper_id text NOT NULL,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  version integer NOT NULL,
  title text NOT NULL,
  abstract text NOT NULL,
  authors jsonb NOT NULL,
  files jsonb NOT NULL,
  published_at timestamptz NOT NULL,
  published_by text NOT NULL,
  PRIMARY KEY (paper_id, version)
);


CREATE TABLE datasets (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  uri text,
  path text COLLATE "C",
  format text NOT NULL,
  size_bytes bigint CHECK (size_bytes >= 0),
  row_count bigint CHECK (row_count >= 0),
  version integer NOT NULL,
  tags jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK ((uri IS NULL) <> (path IS NULL))
);
CREATE INDEX datasets_lab_created ON datasets (lab_id, created_at DESC, id DESC);
CREATE UNIQUE INDEX datasets_lab_name ON datasets (lab_id, lower(name));


CREATE TABLE figures (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  source text NOT NULL CHECK (source IN ('git', 'api')),
  title text NOT NULL,
  caption text,
  path text COLLATE "C",
  url text,
  media_type text,
  size bigint,
  blob_id text,
  commit_sha text,
  experiment_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK (path IS NOT NULL OR url IS NOT NULL)
);
CREATE INDEX figures_lab_created ON figures (lab_id, created_at DESC, id DESC);
-- one row per file of the repository: the sync upserts and deletes by path
CREATE UNIQUE INDEX figures_git_path ON figures (lab_id, path) WHERE source = 'git';


` + agentsToBackups
}
