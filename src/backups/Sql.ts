/** The backups tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
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
