/** The surveys tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
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
`
