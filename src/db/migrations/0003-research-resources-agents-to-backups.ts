/** Migration 3, frozen (see 0003-research-resources.ts): the second half of its text, agents to backups. */
export const agentsToBackups = `CREATE TABLE agents (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  name text NOT NULL,
  role text NOT NULL,
  model text NOT NULL,
  status text NOT NULL CHECK (status IN ('idle', 'active', 'paused', 'retired')),
  last_active_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX agents_lab_created ON agents (lab_id, created_at DESC, id DESC);
CREATE UNIQUE INDEX agents_lab_name ON agents (lab_id, lower(name));


CREATE TABLE knowledge (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  title text NOT NULL,
  body text NOT NULL,
  sources jsonb NOT NULL DEFAULT '[]',
  tags jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX knowledge_lab_created ON knowledge (lab_id, created_at DESC, id DESC);
CREATE INDEX knowledge_tags ON knowledge USING gin (tags jsonb_path_ops);


CREATE TABLE memory (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  agent_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('observation', 'fact', 'plan', 'reflection')),
  content text NOT NULL,
  tags jsonb NOT NULL DEFAULT '[]',
  importance double precision NOT NULL CHECK (importance >= 0 AND importance <= 1),
  created_at timestamptz NOT NULL
);
CREATE INDEX memory_lab_created ON memory (lab_id, created_at DESC, id DESC);
CREATE INDEX memory_lab_agent ON memory (lab_id, agent_id, created_at DESC, id DESC);
CREATE INDEX memory_tags ON memory USING gin (tags jsonb_path_ops);


CREATE TABLE surveys (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  topic text NOT NULL,
  question text NOT NULL,
  status text NOT NULL CHECK (status IN ('draft', 'in_progress', 'completed', 'archived')),
  findings text NOT NULL,
  linked_paper_ids jsonb NOT NULL DEFAULT '[]',
  tags jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX surveys_lab_created ON surveys (lab_id, created_at DESC, id DESC);
CREATE INDEX surveys_lab_status ON surveys (lab_id, status, created_at DESC, id DESC);


CREATE TABLE standups (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  day text NOT NULL CHECK (day ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
  author_kind text NOT NULL CHECK (author_kind IN ('member', 'agent')),
  author_id text NOT NULL,
  done jsonb NOT NULL,
  planned jsonb NOT NULL,
  blockers jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX standups_lab_created ON standups (lab_id, created_at DESC, id DESC);
CREATE UNIQUE INDEX standups_author_day ON standups (lab_id, author_kind, author_id, day);
CREATE INDEX standups_lab_day ON standups (lab_id, day);


CREATE TABLE projects (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'paused', 'completed', 'archived')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX projects_lab_created ON projects (lab_id, created_at DESC, id DESC);
CREATE UNIQUE INDEX projects_lab_name ON projects (lab_id, lower(name));

CREATE TABLE project_items (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('experiment', 'paper', 'task')),
  ref text NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (project_id, kind, ref)
);
CREATE INDEX project_items_ref ON project_items (lab_id, ref);


CREATE TABLE chats (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  title text,
  outcome text,
  promoted_as text CHECK (promoted_as IN ('knowledge', 'task')),
  promoted_ref text,
  promoted_at timestamptz,
  message_count integer NOT NULL DEFAULT 0,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX chats_lab_created ON chats (lab_id, created_at DESC, id DESC);

CREATE TABLE chat_messages (
  id text PRIMARY KEY,
  chat_id text NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  role text NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
  content text NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (chat_id, seq)
);


CREATE TABLE telemetry_events (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  batch_id text NOT NULL,
  name text NOT NULL,
  value double precision NOT NULL,
  unit text,
  occurred_at timestamptz NOT NULL,
  attributes jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX telemetry_events_lab_name_time ON telemetry_events (lab_id, name, occurred_at DESC, id DESC);
CREATE INDEX telemetry_events_lab_time ON telemetry_events (lab_id, occurred_at DESC, id DESC);


CREATE TABLE contributions (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  contributor text NOT NULL,
  contributor_kind text NOT NULL CHECK (contributor_kind IN ('credential', 'agent', 'user', 'system')),
  kind text NOT NULL,
  ref text,
  summary text NOT NULL,
  recorded_by text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX contributions_lab_created ON contributions (lab_id, created_at DESC, id DESC);
CREATE INDEX contributions_lab_contributor ON contributions (lab_id, contributor, created_at DESC, id DESC);


CREATE TABLE backups (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
  size bigint,
  sha256 text,
  tables jsonb NOT NULL,
  rows integer NOT NULL,
  error text,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  completed_at timestamptz,
  restore_status text CHECK (restore_status IN ('pending', 'running', 'completed', 'failed')),
  restore_requested_by text,
  restore_requested_at timestamptz,
  restore_completed_at timestamptz,
  restore_rows integer,
  restore_error text,
  archive bytea
);
CREATE INDEX backups_lab_created ON backups (lab_id, created_at DESC, id DESC);
`
