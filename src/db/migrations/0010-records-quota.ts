/**
 * Migration 10, frozen: its text never changes once released (a deployment applied it as it was).
 * Rows each lab holds across its resources, kept by statement triggers in the writing transaction; a statement that
 * takes a lab over its plan's limit (plan_limits, written at start from QUOTA_RECORDS) is refused with SQLSTATE
 * LQ403, answered 403 quota_exceeded, whatever route or job made it (src/quotas/RecordsQuota.ts); a sync's pull,
 * which sets lab_service.pull for its transaction, is counted but never refused.
 */
export const recordsQuota = {
  id: 10,
  name: "quotas: records per lab",
  sql: `ALTER TABLE lab_usage ADD COLUMN records bigint NOT NULL DEFAULT 0;
CREATE TABLE plan_limits (
  plan text PRIMARY KEY,
  records bigint NOT NULL
);
INSERT INTO lab_usage (lab_id) SELECT l.id FROM labs l ON CONFLICT (lab_id) DO NOTHING;
UPDATE lab_usage u SET records = (
  SELECT
    (SELECT count(*) FROM files x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM tasks x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM agents x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM memory x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM knowledge x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM surveys x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM standups x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM projects x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM project_items x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM chats x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM chat_messages x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM papers x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM paper_versions x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM datasets x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM figures x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM experiment_templates x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM experiment_queues x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM experiments x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM experiment_metrics x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM experiment_costs x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM contributions x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM telemetry_events x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM pods x WHERE x.lab_id = l.id) +
    (SELECT count(*) FROM pod_sessions x WHERE x.lab_id = l.id)
  FROM labs l WHERE l.id = u.lab_id
);

CREATE FUNCTION lab_records_added() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  over record;
BEGIN
  INSERT INTO lab_usage AS u (lab_id, records)
  SELECT n.lab_id, count(*) FROM records_new n GROUP BY n.lab_id
  ON CONFLICT (lab_id) DO UPDATE SET records = u.records + EXCLUDED.records;
  -- a sync's pull brings what the repository has, quota or not (it counts, it is not refused)
  IF coalesce(current_setting('lab_service.pull', true), '') = 'on' THEN
    RETURN NULL;
  END IF;
  SELECT l.slug, l.plan, u.records, p.records AS lim INTO over
  FROM lab_usage u JOIN labs l ON l.id = u.lab_id JOIN plan_limits p ON p.plan = l.plan
  WHERE u.lab_id IN (SELECT n.lab_id FROM records_new n) AND u.records > p.records
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'LQ403', MESSAGE = format(
      'quota exceeded: records of the %s plan (lab %s would hold %s, limit %s); delete records (files, tasks, metrics, telemetry…) before creating more',
      over.plan, over.slug, over.records, over.lim);
  END IF;
  RETURN NULL;
END
$fn$;
CREATE FUNCTION lab_records_removed() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE lab_usage u SET records = u.records - d.n
  FROM (SELECT o.lab_id, count(*) AS n FROM records_old o GROUP BY o.lab_id) d
  WHERE u.lab_id = d.lab_id;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER lab_records_added AFTER INSERT ON files REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON files REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON tasks REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON tasks REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON agents REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON agents REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON memory REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON memory REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON knowledge REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON knowledge REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON surveys REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON surveys REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON standups REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON standups REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON projects REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON projects REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON project_items REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON project_items REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON chats REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON chats REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON chat_messages REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON chat_messages REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON papers REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON papers REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON paper_versions REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON paper_versions REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON datasets REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON datasets REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON figures REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON figures REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON experiment_templates REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON experiment_templates REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON experiment_queues REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON experiment_queues REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON experiments REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON experiments REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON experiment_metrics REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON experiment_metrics REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON experiment_costs REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON experiment_costs REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON contributions REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON contributions REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON telemetry_events REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON telemetry_events REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON pods REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON pods REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
CREATE TRIGGER lab_records_added AFTER INSERT ON pod_sessions REFERENCING NEW TABLE AS records_new
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_added();
CREATE TRIGGER lab_records_removed AFTER DELETE ON pod_sessions REFERENCING OLD TABLE AS records_old
  FOR EACH STATEMENT EXECUTE FUNCTION lab_records_removed();
`
}
