/**
 * Migration 8, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * Per-lab stored bytes (lab_usage, kept by statement triggers) and an index for the API-keys quota.
 */
export const storedBytesQuota = {
  id: 8,
  name: "quotas: per-lab stored bytes, keys by scope",
  sql: `-- bytes of each lab's files, kept by statement triggers in the writing transaction (stored-bytes quota);
-- a SUM over 50,000 files took 30-55 ms on PGlite, reading this row takes one index lookup
CREATE TABLE lab_usage (
  lab_id text PRIMARY KEY REFERENCES labs (id) ON DELETE CASCADE,
  file_bytes bigint NOT NULL DEFAULT 0
);
INSERT INTO lab_usage (lab_id, file_bytes)
SELECT l.id, COALESCE((SELECT sum(f.size) FROM files f WHERE f.lab_id = l.id), 0) FROM labs l;

CREATE FUNCTION lab_usage_files_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO lab_usage AS u (lab_id, file_bytes)
  SELECT n.lab_id, sum(n.size) FROM usage_new n GROUP BY n.lab_id
  ON CONFLICT (lab_id) DO UPDATE SET file_bytes = u.file_bytes + EXCLUDED.file_bytes;
  RETURN NULL;
END
$fn$;
CREATE FUNCTION lab_usage_files_updated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO lab_usage AS u (lab_id, file_bytes)
  SELECT d.lab_id, sum(d.bytes) FROM (
    SELECT n.lab_id, n.size::bigint AS bytes FROM usage_new n
    UNION ALL
    SELECT o.lab_id, -o.size::bigint FROM usage_old o
  ) d GROUP BY d.lab_id HAVING sum(d.bytes) <> 0
  ON CONFLICT (lab_id) DO UPDATE SET file_bytes = u.file_bytes + EXCLUDED.file_bytes;
  RETURN NULL;
END
$fn$;
CREATE FUNCTION lab_usage_files_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE lab_usage u SET file_bytes = u.file_bytes - d.bytes
  FROM (SELECT o.lab_id, sum(o.size) AS bytes FROM usage_old o GROUP BY o.lab_id) d
  WHERE u.lab_id = d.lab_id;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER lab_usage_inserted AFTER INSERT ON files
  REFERENCING NEW TABLE AS usage_new FOR EACH STATEMENT EXECUTE FUNCTION lab_usage_files_inserted();
CREATE TRIGGER lab_usage_updated AFTER UPDATE ON files
  REFERENCING OLD TABLE AS usage_old NEW TABLE AS usage_new FOR EACH STATEMENT EXECUTE FUNCTION lab_usage_files_updated();
CREATE TRIGGER lab_usage_deleted AFTER DELETE ON files
  REFERENCING OLD TABLE AS usage_old FOR EACH STATEMENT EXECUTE FUNCTION lab_usage_files_deleted();

-- the keys naming a lab (API-keys quota)
CREATE INDEX api_keys_scopes ON api_keys USING gin (scopes jsonb_path_ops);
`
}
