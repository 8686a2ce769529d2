/** The papers tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
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
`
