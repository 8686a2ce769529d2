/** The agents tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
CREATE TABLE agents (
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
`
