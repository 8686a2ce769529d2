/** The contributions tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
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
`
