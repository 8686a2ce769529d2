/** The projects tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
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
`
