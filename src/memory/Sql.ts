/** The memory tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
CREATE TABLE memory (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  agent_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('observation', 'fact', 'plan', 'reflection')),
  content text NOT NULL,
  tags jsonb NOT NULL DEFAULT '[]',
  importance double precision NOT NULL CHECK (importance >= 0 AND importance <= 1),
  created_at timestamptz NOT NULL
);
CREATE INDEX memory_lab_created ON memory (lab_id, created_at DESC, id DESC);
CREATE INDEX memory_lab_agent ON memory (lab_id, agent_id, created_at DESC, id DESC);
CREATE INDEX memory_tags ON memory USING gin (tags jsonb_path_ops);
`
