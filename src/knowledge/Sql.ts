/** The knowledge tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
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
`
