/** The figures tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
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
`
