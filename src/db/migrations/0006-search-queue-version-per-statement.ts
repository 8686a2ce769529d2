/**
 * Migration 6, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * The queue functions of migration 5 with one version per statement (one nextval in a sub-select run once): a key
 * appears once per statement, so it still gets a new version on its next write; a nextval per row cost a sync's
 * upsert a tenth of its time.
 */
export const searchQueueVersionPerStatement = {
  id: 6,
  name: "search queue: one version per statement",
  sql: `
CREATE OR REPLACE FUNCTION search_queue_files_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO search_queue (lab_id, kind, ref, version)
  SELECT n.lab_id, 'files', n.path::text, (SELECT nextval('search_queue_version')) FROM search_new n
  ON CONFLICT (lab_id, kind, ref) DO UPDATE SET version = EXCLUDED.version;
  RETURN NULL;
END
$fn$;
CREATE OR REPLACE FUNCTION search_queue_files_updated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM search_documents d USING search_old o
  WHERE d.lab_id = o.lab_id AND d.kind = 'files' AND d.ref = o.path::text
    AND NOT EXISTS (SELECT 1 FROM search_new n WHERE n.lab_id = o.lab_id AND n.path = o.path);
  INSERT INTO search_queue (lab_id, kind, ref, version)
  SELECT n.lab_id, 'files', n.path::text, (SELECT nextval('search_queue_version')) FROM search_new n
  WHERE NOT EXISTS (SELECT 1 FROM search_old o WHERE o.lab_id = n.lab_id AND o.path = n.path AND o.path IS NOT DISTINCT FROM n.path AND o.content IS NOT DISTINCT FROM n.content)
  ON CONFLICT (lab_id, kind, ref) DO UPDATE SET version = EXCLUDED.version;
  RETURN NULL;
END
$fn$;
CREATE OR REPLACE FUNCTION search_queue_files_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM search_documents d USING search_old o
  WHERE d.lab_id = o.lab_id AND d.kind = 'files' AND d.ref = o.path::text;
  RETURN NULL;
END
$fn$;
`
}
