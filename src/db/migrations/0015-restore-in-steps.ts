/**
 * Migration 15, frozen: its text never changes once released (deployments applied it as it was); add a migration instead.
 * A restore puts a lab back in short committed steps: the lab's mark (lab_restores) says a restore is under way, and a
 * gate on every table a restore replaces refuses the lab's writes meanwhile (SQLSTATE LR409, answered 409 conflict),
 * except the restore's own, which name it in the setting lab.restore for their transaction.
 */
export const restoreInSteps = {
  id: 15,
  name: "backups: restores applied in steps behind a per-lab gate",
  sql: `
-- one row per lab being restored: what the restore needs to finish (the archive's header and trailer), and when its
-- runner last showed it was alive (another replica finishes a restore whose runner stopped)
CREATE TABLE lab_restores (
  lab_id text PRIMARY KEY REFERENCES labs (id) ON DELETE CASCADE,
  backup_id text NOT NULL,
  staged jsonb NOT NULL,
  heartbeat_at timestamptz NOT NULL
);

-- the gate: a statement that wrote rows of a lab being restored is refused, unless its transaction is that restore;
-- with no restore anywhere (nearly always) it reads one empty table and returns
CREATE FUNCTION lab_restore_gate() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  held record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM lab_restores) THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'DELETE' THEN
    SELECT r.lab_id, r.backup_id INTO held FROM lab_restores r
    WHERE r.lab_id IN (SELECT o.lab_id FROM restore_gate_old o)
      AND r.backup_id IS DISTINCT FROM current_setting('lab.restore', true)
    LIMIT 1;
  ELSE
    SELECT r.lab_id, r.backup_id INTO held FROM lab_restores r
    WHERE r.lab_id IN (SELECT n.lab_id FROM restore_gate_new n)
      AND r.backup_id IS DISTINCT FROM current_setting('lab.restore', true)
    LIMIT 1;
  END IF;
  IF FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'LR409', MESSAGE = format(
      'lab %s is being restored from backup %s; retry when the restore has ended', held.lab_id, held.backup_id);
  END IF;
  RETURN NULL;
END
$fn$;

-- the gate on one table (a row's lab_id never changes: an update is checked on its new rows); a later migration
-- adding a table a restore replaces calls it
CREATE FUNCTION lab_restore_gate_on(tbl regclass) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  EXECUTE format('CREATE TRIGGER lab_restore_gate_inserted AFTER INSERT ON %s REFERENCING NEW TABLE AS restore_gate_new
    FOR EACH STATEMENT EXECUTE FUNCTION lab_restore_gate()', tbl);
  EXECUTE format('CREATE TRIGGER lab_restore_gate_updated AFTER UPDATE ON %s REFERENCING NEW TABLE AS restore_gate_new
    FOR EACH STATEMENT EXECUTE FUNCTION lab_restore_gate()', tbl);
  EXECUTE format('CREATE TRIGGER lab_restore_gate_deleted AFTER DELETE ON %s REFERENCING OLD TABLE AS restore_gate_old
    FOR EACH STATEMENT EXECUTE FUNCTION lab_restore_gate()', tbl);
END
$fn$;

-- every table with a lab_id but those a restore does not replace: not archived (backups, outbox, webhook_deliveries,
-- search_documents, search_queue, lab_usage, the marks themselves), merged (activity, pod_sessions) or kept (pods)
DO $do$
DECLARE
  t text;
BEGIN
  FOR t IN
    SELECT c.table_name FROM information_schema.columns c
    JOIN information_schema.tables x ON x.table_schema = c.table_schema AND x.table_name = c.table_name
    WHERE c.table_schema = current_schema() AND c.column_name = 'lab_id' AND x.table_type = 'BASE TABLE'
      AND c.table_name NOT IN ('backups', 'outbox', 'webhook_deliveries', 'search_documents', 'search_queue',
        'lab_usage', 'lab_restores', 'activity', 'pod_sessions', 'pods')
    ORDER BY c.table_name
  LOOP
    PERFORM lab_restore_gate_on(format('%I', t)::regclass);
  END LOOP;
END
$do$;
`
}
