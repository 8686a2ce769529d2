/** The standups tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
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
`
