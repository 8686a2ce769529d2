/**
 * Full-text search (migrations 4 and 5, after every table it indexes). One row
 * per searchable record in search_documents, kept current by AFTER INSERT /
 * UPDATE / DELETE triggers on the indexed tables, so every write path (the API,
 * git sync, a backup's restore, plain SQL) reaches the index.
 *
 * Records are indexed in the writer's transaction, except files (migration 5):
 * a git sync writes thousands at once and parsing their text for the index
 * costs several times the write itself, so a file's trigger only queues it
 * (search_queue) and SearchIndexer.ts indexes the queue in the background; a
 * search first indexes what its lab still has queued, so it reads its writes.
 */

/** Text search configuration: English stemming and stop words (PostgreSQL and PGlite ship it). */
export const CONFIG = "english"

/** Body characters indexed (and kept for snippets): bounds the tsvector below PostgreSQL's 1 MB limit. */
export const MAX_INDEXED_BODY = 100_000

export const SearchKinds = ["files", "papers", "knowledge", "memory", "tasks", "experiments"] as const
export type SearchKind = (typeof SearchKinds)[number]

/**
 * What is indexed, per table. Expressions are over the trigger's NEW record
 * (written `r.`): `title` is shown in results, `titleText` is indexed with
 * weight A, `body` with weight B. These columns are a contract with the
 * features owning the tables (docs/RESOURCES-BRIEF.md).
 */
export interface Indexed {
  readonly kind: SearchKind
  readonly table: string
  /** The column naming the record within the lab (ref). */
  readonly key: string
  /** Columns the expressions use: checked to exist before the triggers are created. */
  readonly columns: ReadonlyArray<string>
  readonly title: string
  readonly titleText: string
  readonly body: string
}

export const INDEXED: ReadonlyArray<Indexed> = [
  {
    kind: "files",
    table: "files",
    key: "path",
    columns: ["path", "content"],
    title: "r.path",
    // the path as words too: /notes/idea-draft.md is found by "idea" and "draft"
    titleText: `r.path || ' ' || regexp_replace(r.path, '[/._-]+', ' ', 'g')`,
    body: "r.content"
  },
  {
    kind: "papers",
    table: "papers",
    key: "id",
    columns: ["id", "title", "abstract"],
    title: "r.title",
    titleText: "r.title",
    body: "r.abstract"
  },
  {
    kind: "knowledge",
    table: "knowledge",
    key: "id",
    columns: ["id", "title", "body"],
    title: "r.title",
    titleText: "r.title",
    body: "r.body"
  },
  {
    kind: "memory",
    table: "memory",
    key: "id",
    columns: ["id", "content"],
    // a memory has no title: its first line, shortened, stands for one
    title: `left(split_part(r.content, E'\\n', 1), 120)`,
    titleText: "''",
    body: "r.content"
  },
  {
    kind: "tasks",
    table: "tasks",
    key: "id",
    columns: ["id", "title", "description"],
    title: "r.title",
    titleText: "r.title",
    body: "r.description"
  },
  {
    kind: "experiments",
    table: "experiments",
    key: "id",
    columns: ["id", "name", "description", "hypothesis"],
    title: "r.name",
    titleText: "r.name",
    body: `concat_ws(E'\\n\\n', r.description, r.hypothesis)`
  }
]

const over = (expression: string, record: string) => expression.replace(/\br\./g, `${record}.`)

/** The trigger function and triggers of one table, created only when the table exists (and has the columns). */
const triggers = (t: Indexed): string => {
  const fn = `search_index_${t.table}`
  const put = (record: string) =>
    `search_put(${record}.lab_id, '${t.kind}', ${record}.${t.key}::text, ${over(t.title, record)}, ${over(t.titleText, record)}, ${over(t.body, record)})`
  const changed = ["lab_id", ...t.columns].map((c) => `OLD.${c} IS DISTINCT FROM NEW.${c}`).join(" OR ")
  const required = ["lab_id", ...t.columns].map((c) => `'${c}'`).join(", ")
  return `
CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = '${t.kind}' AND ref = OLD.${t.key}::text;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND (OLD.lab_id IS DISTINCT FROM NEW.lab_id OR OLD.${t.key} IS DISTINCT FROM NEW.${t.key}) THEN
    DELETE FROM search_documents WHERE lab_id = OLD.lab_id AND kind = '${t.kind}' AND ref = OLD.${t.key}::text;
  END IF;
  PERFORM ${put("NEW")};
  RETURN NULL;
END
$fn$;

DO $do$
DECLARE
  missing text;
BEGIN
  IF to_regclass('${t.table}') IS NULL THEN
    RAISE NOTICE 'search: there is no table ${t.table}; ${t.kind} are not indexed';
    RETURN;
  END IF;
  SELECT string_agg(c, ', ') INTO missing
  FROM unnest(ARRAY[${required}]) AS c
  WHERE NOT EXISTS (
    SELECT 1 FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = '${t.table}' AND column_name = c
  );
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'search indexes ${t.table}(${t.columns.join(", ")}) but the table has no %', missing;
  END IF;
  EXECUTE $sql$CREATE TRIGGER search_index AFTER INSERT OR DELETE ON ${t.table}
    FOR EACH ROW EXECUTE FUNCTION ${fn}()$sql$;
  EXECUTE $sql$CREATE TRIGGER search_index_update AFTER UPDATE ON ${t.table}
    FOR EACH ROW WHEN (${changed}) EXECUTE FUNCTION ${fn}()$sql$;
  EXECUTE $sql$SELECT ${put("r")} FROM ${t.table} r$sql$;
END
$do$;
`
}

export const schema = `
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
    left(coalesce(p_body, ''), ${MAX_INDEXED_BODY}),
    setweight(to_tsvector('${CONFIG}', coalesce(p_title_text, '')), 'A')
      || setweight(to_tsvector('${CONFIG}', left(coalesce(p_body, ''), ${MAX_INDEXED_BODY})), 'B'),
    now()
  )
  ON CONFLICT (lab_id, kind, ref) DO UPDATE
    SET title = EXCLUDED.title, body = EXCLUDED.body, tsv = EXCLUDED.tsv, updated_at = EXCLUDED.updated_at
$fn$;
${INDEXED.map(triggers).join("")}`

/** Kinds whose trigger queues the record instead of indexing it (migration 5): written in bulk by git sync. */
export const QUEUED_KINDS: ReadonlyArray<SearchKind> = ["files"]

/**
 * A queued table's row triggers (migration 4) give way to statement triggers
 * over transition tables: a sync's upsert of 500 files queues them in one
 * statement instead of 500 trigger calls. A removed (or moved) record leaves the
 * index at once; a written one whose indexed columns changed is queued.
 */
const queueTriggers = (t: Indexed): string => `
DROP TRIGGER search_index ON ${t.table};
DROP TRIGGER search_index_update ON ${t.table};
DROP FUNCTION search_index_${t.table}();
${queueFunctions(t)}
CREATE TRIGGER search_queue_inserted AFTER INSERT ON ${t.table}
  REFERENCING NEW TABLE AS search_new FOR EACH STATEMENT EXECUTE FUNCTION search_queue_${t.table}_inserted();
CREATE TRIGGER search_queue_updated AFTER UPDATE ON ${t.table}
  REFERENCING OLD TABLE AS search_old NEW TABLE AS search_new FOR EACH STATEMENT EXECUTE FUNCTION search_queue_${t.table}_updated();
CREATE TRIGGER search_queue_deleted AFTER DELETE ON ${t.table}
  REFERENCING OLD TABLE AS search_old FOR EACH STATEMENT EXECUTE FUNCTION search_queue_${t.table}_deleted();
`

/**
 * The functions behind a queued table's statement triggers. A statement's rows
 * share one version (one nextval, in a sub-select run once): a key appears
 * once per statement, and the next write of it is another statement, so it
 * still gets a new version; a nextval per row cost a sync's upsert a tenth of its time.
 */
const queueFunctions = (t: Indexed): string => {
  const fn = `search_queue_${t.table}`
  const sameKey = (a: string, b: string) => `${a}.lab_id = ${b}.lab_id AND ${a}.${t.key} = ${b}.${t.key}`
  const unchanged = t.columns.map((c) => `o.${c} IS NOT DISTINCT FROM n.${c}`).join(" AND ")
  const queue = (where: string) => `
  INSERT INTO search_queue (lab_id, kind, ref, version)
  SELECT n.lab_id, '${t.kind}', n.${t.key}::text, (SELECT nextval('search_queue_version')) FROM search_new n${where}
  ON CONFLICT (lab_id, kind, ref) DO UPDATE SET version = EXCLUDED.version;`
  const unindex = (where: string) => `
  DELETE FROM search_documents d USING search_old o
  WHERE d.lab_id = o.lab_id AND d.kind = '${t.kind}' AND d.ref = o.${t.key}::text${where};`
  return `
CREATE OR REPLACE FUNCTION ${fn}_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN${queue("")}
  RETURN NULL;
END
$fn$;
CREATE OR REPLACE FUNCTION ${fn}_updated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN${unindex(`
    AND NOT EXISTS (SELECT 1 FROM search_new n WHERE ${sameKey("n", "o")})`)}${queue(`
  WHERE NOT EXISTS (SELECT 1 FROM search_old o WHERE ${sameKey("o", "n")} AND ${unchanged})`)}
  RETURN NULL;
END
$fn$;
CREATE OR REPLACE FUNCTION ${fn}_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN${unindex("")}
  RETURN NULL;
END
$fn$;
`
}

/** Migration 6: the queue functions of migration 5 with one version per statement (queueFunctions). */
export const queueVersionPerStatement = INDEXED.filter((t) => QUEUED_KINDS.includes(t.kind)).map(queueFunctions).join("")

/** Index a queued record of one kind from its table, or drop its document when the record is gone. */
const drainBranch = (t: Indexed): string => `
    IF item.kind = '${t.kind}' THEN
      PERFORM search_put(r.lab_id, '${t.kind}', r.${t.key}::text, ${t.title}, ${t.titleText}, ${t.body})
      FROM ${t.table} r WHERE r.lab_id = item.lab_id AND r.${t.key}::text = item.ref;
      found_it := FOUND;
    END IF;`

/**
 * The queue of records to index. `version` grows with every write: the indexer
 * removes an entry only at the version it indexed, so a record written again
 * meanwhile stays queued. search_drain indexes `p_limit` entries (of one lab, or
 * of all when p_lab is null) in key order, which needs no index beyond the key
 * (an index on version cost a sync's upsert a third of its time), and says how
 * many it took; entries another transaction is indexing are waited for, then skipped.
 */
export const queueSchema = `
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
    found_it := false;${INDEXED.filter((t) => QUEUED_KINDS.includes(t.kind)).map(drainBranch).join("")}
    IF NOT found_it THEN
      DELETE FROM search_documents WHERE lab_id = item.lab_id AND kind = item.kind AND ref = item.ref;
    END IF;
    DELETE FROM search_queue WHERE lab_id = item.lab_id AND kind = item.kind AND ref = item.ref AND version = item.version;
    taken := taken + 1;
  END LOOP;
  RETURN taken;
END
$fn$;
${INDEXED.filter((t) => QUEUED_KINDS.includes(t.kind)).map(queueTriggers).join("")}`
