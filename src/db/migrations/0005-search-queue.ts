/**
 * Migration 5, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * The search queue: a git sync writes thousands of files at once and parsing their text for the index costs several
 * times the write itself, so the files' row triggers of migration 4 give way to statement triggers that only queue the
 * file (search_queue); SearchIndexer.ts drains the queue in the background (search_drain), and a search first drains
 * what its lab still has queued, so it reads its writes. `version` grows with every write: the indexer removes an entry
 * only at the version it indexed, so a record written again meanwhile stays queued. search_drain takes entries in key
 * order (an index on version cost a sync's upsert a third of its time).
 */
export const searchQueue = {
  id: 5,
  name: "search queue",
  sql: `
CREATE SEQUENCE search_queue_version;
CREATE TABLE search_queue (
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  kind text NOT NULL,
  ref text NOT NULL,
  version bigint NOT NULL,
  PRIMARY KEY (lab_id, kind, ref)
);

CREATE FUNCTION search_drain(p_lab text, p_limit integer) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  item record;
  found_it boolean;
  taken integer := 0;
BEGIN
  FOR item IN
    SELECT q.lab_id, q.kind, q.ref, q.version FROM search_queue q
    WHERE p_lab IS NULL OR q.lab_id = p_lab
    ORDER BY q.lab_id, q.kind, q.ref
    LIMIT p_limit
    FOR UPDATE
  LOOP
    found_it := false;
    IF item.kind = 'files' THEN
      PERFORM search_put(r.lab_id, 'files', r.path::text, r.path, r.path || ' ' || regexp_replace(r.path, '[/._-]+', ' ', 'g'), r.content)
      FROM files r WHERE r.lab_id = item.lab_id AND r.path::text = item.ref;
      found_it := FOUND;
    END IF;
    IF NOT found_it THEN
      DELETE FROM search_documents WHERE lab_id = item.lab_id AND kind = item.kind AND ref = item.ref;
    END IF;
    DELETE FROM search_queue WHERE lab_id = item.lab_id AND kind = item.kind AND ref = item.ref AND version = item.version;
    taken := taken + 1;
  END LOOP;
  RETURN taken;
END
$fn$;

DROP TRIGGER search_index ON files;
DROP TRIGGER search_index_update ON files;
DROP FUNCTION search_index_files();

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

CREATE TRIGGER search_queue_inserted AFTER INSERT ON files
  REFERENCING NEW TABLE AS search_new FOR EACH STATEMENT EXECUTE FUNCTION search_queue_files_inserted();
CREATE TRIGGER search_queue_updated AFTER UPDATE ON files
  REFERENCING OLD TABLE AS search_old NEW TABLE AS search_new FOR EACH STATEMENT EXECUTE FUNCTION search_queue_files_updated();
CREATE TRIGGER search_queue_deleted AFTER DELETE ON files
  REFERENCING OLD TABLE AS search_old FOR EACH STATEMENT EXECUTE FUNCTION search_queue_files_deleted();
`
}
