/** The datasets tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
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
`
