/**
 * Migration 4, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * Full-text search, after every table it indexes. One row per searchable record in search_documents (title weight A,
 * body weight B, text search configuration 'english' as queries use it (src/search/Sql.ts), bodies cut at 100,000
 * characters to keep the tsvector below PostgreSQL's 1 MB limit), kept current by row triggers on the indexed tables,
 * so every write path (the API, git sync, a backup's restore, plain SQL) reaches the index. A missing table is skipped
 * with a notice; a table without an indexed column is refused. Its existing rows are indexed (backfill).
 */
export const search = {
  id: 4,
  name: "search",
  sql: `
CREATE TABLE search_documents (
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  kind text NOT NULL,
  ref text NOT NULL,
  title text NOT NULL,
  body text NOT NULL,
  tsv tsvector NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (lab_id, kind, ref)
);
-- fastupdate off: no pending list to scan on every search (PGlite has no autovacuum to flush one)
CREATE INDEX search_documents_tsv ON search_documents USING gin (tsv) WITH (fastupdate = off);
-- the newest matches of a broad query, walked in order (see MAX_RANKED in SearchRepo.ts)
CREATE INDEX search_documents_recent ON search_documents (lab_id, updated_at DESC, kind, ref);

-- Insert or replace one record's document: title (weight A) and body (weight B).
CREATE FUNCTION search_put(p_lab text, p_kind text, p_ref text, p_title text, p_title_text text, p_body text)
RETURNS void LANGUAGE sql AS $fn$
  INSERT INTO search_documents (lab_id, kind, ref, title, body, tsv, updated_at)
  VALUES (
    p_lab, p_kind, p_ref,
    left(coalesce(p_title, ''), 500),
    left(coalesce(p_body, ''), 100000),
    setweight(to_tsvector('english', coalesce(p_title_text, '')), 'A')
      || setweight(to_tsvector('english', left(coalesce(p_body, ''), 100000)), 'B'),
    now()
  )
  ON CONFLICT (lab_id, kind, ref) DO UPDATE
    SET title = EXCLUDED.title, body = EXCLUDED.body, tsv = EXCLUDED.tsv, updated_at = EXCLUDED.updated_at
$fn$;

CREATE FUNCTION search_index_files() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = 'files' AND ref = OLD.path::text;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND (OLD.lab_id IS DISTINCT FROM NEW.lab_id OR OLD.path IS DISTINCT FROM NEW.path) THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = 'files' AND ref = OLD.path::text;
  END IF;
  PERFORM search_put(NEW.lab_id, 'files', NEW.path::text, NEW.path, NEW.path || ' ' || regexp_replace(NEW.path, '[/._-]+', ' ', 'g'), NEW.content);
  RETURN NULL;
END
$fn$;

DO $do$
DECLARE
  missing text;
BEGIN
  IF to_regclass('files') IS NULL THEN
    RAISE NOTICE 'search: there is no table files; files are not indexed';
    RETURN;
  END IF;
  SELECT string_agg(c, ', ') INTO missing
  FROM unnest(ARRAY['lab_id', 'path', 'content']) AS c
  WHERE NOT EXISTS (
    SELECT 1 FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'files' AND column_name = c
  );
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'search indexes files(path, content) but the table has no %', missing;
  END IF;
  EXECUTE $sql$CREATE TRIGGER search_index AFTER INSERT OR DELETE ON files
    FOR EACH ROW EXECUTE FUNCTION search_index_files()$sql$;
  EXECUTE $sql$CREATE TRIGGER search_index_update AFTER UPDATE ON files
    FOR EACH ROW WHEN (OLD.lab_id IS DISTINCT FROM NEW.lab_id OR OLD.path IS DISTINCT FROM NEW.path OR OLD.content IS DISTINCT FROM NEW.content) EXECUTE FUNCTION search_index_files()$sql$;
  EXECUTE $sql$SELECT search_put(r.lab_id, 'files', r.path::text, r.path, r.path || ' ' || regexp_replace(r.path, '[/._-]+', ' ', 'g'), r.content) FROM files r$sql$;
END
$do$;

CREATE FUNCTION search_index_papers() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = 'papers' AND ref = OLD.id::text;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND (OLD.lab_id IS DISTINCT FROM NEW.lab_id OR OLD.id IS DISTINCT FROM NEW.id) THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = 'papers' AND ref = OLD.id::text;
  END IF;
  PERFORM search_put(NEW.lab_id, 'papers', NEW.id::text, NEW.title, NEW.title, NEW.abstract);
  RETURN NULL;
END
$fn$;

DO $do$
DECLARE
  missing text;
BEGIN
  IF to_regclass('papers') IS NULL THEN
    RAISE NOTICE 'search: there is no table papers; papers are not indexed';
    RETURN;
  END IF;
  SELECT string_agg(c, ', ') INTO missing
  FROM unnest(ARRAY['lab_id', 'id', 'title', 'abstract']) AS c
  WHERE NOT EXISTS (
    SELECT 1 FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'papers' AND column_name = c
  );
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'search indexes papers(id, title, abstract) but the table has no %', missing;
  END IF;
  EXECUTE $sql$CREATE TRIGGER search_index AFTER INSERT OR DELETE ON papers
    FOR EACH ROW EXECUTE FUNCTION search_index_papers()$sql$;
  EXECUTE $sql$CREATE TRIGGER search_index_update AFTER UPDATE ON papers
    FOR EACH ROW WHEN (OLD.lab_id IS DISTINCT FROM NEW.lab_id OR OLD.id IS DISTINCT FROM NEW.id OR OLD.title IS DISTINCT FROM NEW.title OR OLD.abstract IS DISTINCT FROM NEW.abstract) EXECUTE FUNCTION search_index_papers()$sql$;
  EXECUTE $sql$SELECT search_put(r.lab_id, 'papers', r.id::text, r.title, r.title, r.abstract) FROM papers r$sql$;
END
$do$;

CREATE FUNCTION search_index_knowledge() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = 'knowledge' AND ref = OLD.id::text;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND (OLD.lab_id IS DISTINCT FROM NEW.lab_id OR OLD.id IS DISTINCT FROM NEW.id) THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = 'knowledge' AND ref = OLD.id::text;
  END IF;
  PERFORM search_put(NEW.lab_id, 'knowledge', NEW.id::text, NEW.title, NEW.title, NEW.body);
  RETURN NULL;
END
$fn$;

DO $do$
DECLARE
  missing text;
BEGIN
  IF to_regclass('knowledge') IS NULL THEN
    RAISE NOTICE 'search: there is no table knowledge; knowledge are not indexed';
    RETURN;
  END IF;
  SELECT string_agg(c, ', ') INTO missing
  FROM unnest(ARRAY['lab_id', 'id', 'title', 'body']) AS c
  WHERE NOT EXISTS (
    SELECT 1 FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'knowledge' AND column_name = c
  );
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'search indexes knowledge(id, title, body) but the table has no %', missing;
  END IF;
  EXECUTE $sql$CREATE TRIGGER search_index AFTER INSERT OR DELETE ON knowledge
    FOR EACH ROW EXECUTE FUNCTION search_index_knowledge()$sql$;
  EXECUTE $sql$CREATE TRIGGER search_index_update AFTER UPDATE ON knowledge
    FOR EACH ROW WHEN (OLD.lab_id IS DISTINCT FROM NEW.lab_id OR OLD.id IS DISTINCT FROM NEW.id OR OLD.title IS DISTINCT FROM NEW.title OR OLD.body IS DISTINCT FROM NEW.body) EXECUTE FUNCTION search_index_knowledge()$sql$;
  EXECUTE $sql$SELECT search_put(r.lab_id, 'knowledge', r.id::text, r.title, r.title, r.body) FROM knowledge r$sql$;
END
$do$;

CREATE FUNCTION search_index_memory() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = 'memory' AND ref = OLD.id::text;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND (OLD.lab_id IS DISTINCT FROM NEW.lab_id OR OLD.id IS DISTINCT FROM NEW.id) THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = 'memory' AND ref = OLD.id::text;
  END IF;
  PERFORM search_put(NEW.lab_id, 'memory', NEW.id::text, left(split_part(NEW.content, E'\\n', 1), 120), '', NEW.content);
  RETURN NULL;
END
$fn$;

DO $do$
DECLARE
  missing text;
BEGIN
  IF to_regclass('memory') IS NULL THEN
    RAISE NOTICE 'search: there is no table memory; memory are not indexed';
    RETURN;
  END IF;
  SELECT string_agg(c, ', ') INTO missing
  FROM unnest(ARRAY['lab_id', 'id', 'content']) AS c
  WHERE NOT EXISTS (
    SELECT 1 FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'memory' AND column_name = c
  );
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'search indexes memory(id, content) but the table has no %', missing;
  END IF;
  EXECUTE $sql$CREATE TRIGGER search_index AFTER INSERT OR DELETE ON memory
    FOR EACH ROW EXECUTE FUNCTION search_index_memory()$sql$;
  EXECUTE $sql$CREATE TRIGGER search_index_update AFTER UPDATE ON memory
    FOR EACH ROW WHEN (OLD.lab_id IS DISTINCT FROM NEW.lab_id OR OLD.id IS DISTINCT FROM NEW.id OR OLD.content IS DISTINCT FROM NEW.content) EXECUTE FUNCTION search_index_memory()$sql$;
  EXECUTE $sql$SELECT search_put(r.lab_id, 'memory', r.id::text, left(split_part(r.content, E'\\n', 1), 120), '', r.content) FROM memory r$sql$;
END
$do$;

CREATE FUNCTION search_index_tasks() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = 'tasks' AND ref = OLD.id::text;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND (OLD.lab_id IS DISTINCT FROM NEW.lab_id OR OLD.id IS DISTINCT FROM NEW.id) THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = 'tasks' AND ref = OLD.id::text;
  END IF;
  PERFORM search_put(NEW.lab_id, 'tasks', NEW.id::text, NEW.title, NEW.title, NEW.description);
  RETURN NULL;
END
$fn$;

DO $do$
DECLARE
  missing text;
BEGIN
  IF to_regclass('tasks') IS NULL THEN
    RAISE NOTICE 'search: there is no table tasks; tasks are not indexed';
    RETURN;
  END IF;
  SELECT string_agg(c, ', ') INTO missing
  FROM unnest(ARRAY['lab_id', 'id', 'title', 'description']) AS c
  WHERE NOT EXISTS (
    SELECT 1 FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'tasks' AND column_name = c
  );
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'search indexes tasks(id, title, description) but the table has no %', missing;
  END IF;
  EXECUTE $sql$CREATE TRIGGER search_index AFTER INSERT OR DELETE ON tasks
    FOR EACH ROW EXECUTE FUNCTION search_index_tasks()$sql$;
  EXECUTE $sql$CREATE TRIGGER search_index_update AFTER UPDATE ON tasks
    FOR EACH ROW WHEN (OLD.lab_id IS DISTINCT FROM NEW.lab_id OR OLD.id IS DISTINCT FROM NEW.id OR OLD.title IS DISTINCT FROM NEW.title OR OLD.description IS DISTINCT FROM NEW.description) EXECUTE FUNCTION search_index_tasks()$sql$;
  EXECUTE $sql$SELECT search_put(r.lab_id, 'tasks', r.id::text, r.title, r.title, r.description) FROM tasks r$sql$;
END
$do$;

CREATE FUNCTION search_index_experiments() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = 'experiments' AND ref = OLD.id::text;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND (OLD.lab_id IS DISTINCT FROM NEW.lab_id OR OLD.id IS DISTINCT FROM NEW.id) THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = 'experiments' AND ref = OLD.id::text;
  END IF;
  PERFORM search_put(NEW.lab_id, 'experiments', NEW.id::text, NEW.name, NEW.name, concat_ws(E'\\n\\n', NEW.description, NEW.hypothesis));
  RETURN NULL;
END
$fn$;

DO $do$
DECLARE
  missing text;
BEGIN
  IF to_regclass('experiments') IS NULL THEN
    RAISE NOTICE 'search: there is no table experiments; experiments are not indexed';
    RETURN;
  END IF;
  SELECT string_agg(c, ', ') INTO missing
  FROM unnest(ARRAY['lab_id', 'id', 'name', 'description', 'hypothesis']) AS c
  WHERE NOT EXISTS (
    SELECT 1 FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'experiments' AND column_name = c
  );
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'search indexes experiments(id, name, description, hypothesis) but the table has no %', missing;
  END IF;
  EXECUTE $sql$CREATE TRIGGER search_index AFTER INSERT OR DELETE ON experiments
    FOR EACH ROW EXECUTE FUNCTION search_index_experiments()$sql$;
  EXECUTE $sql$CREATE TRIGGER search_index_update AFTER UPDATE ON experiments
    FOR EACH ROW WHEN (OLD.lab_id IS DISTINCT FROM NEW.lab_id OR OLD.id IS DISTINCT FROM NEW.id OR OLD.name IS DISTINCT FROM NEW.name OR OLD.description IS DISTINCT FROM NEW.description OR OLD.hypothesis IS DISTINCT FROM NEW.hypothesis) EXECUTE FUNCTION search_index_experiments()$sql$;
  EXECUTE $sql$SELECT search_put(r.lab_id, 'experiments', r.id::text, r.name, r.name, concat_ws(E'\\n\\n', r.description, r.hypothesis)) FROM experiments r$sql$;
END
$do$;
`
}
