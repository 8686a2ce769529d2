/** The telemetry tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
CREATE TABLE telemetry_events (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  batch_id text NOT NULL,
  name text NOT NULL,
  value double precision NOT NULL,
  unit text,
  occurred_at timestamptz NOT NULL,
  attributes jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX telemetry_events_lab_name_time ON telemetry_events (lab_id, name, occurred_at DESC, id DESC);
CREATE INDEX telemetry_events_lab_time ON telemetry_events (lab_id, occurred_at DESC, id DESC);
`
