/**
 * Migration 14, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * PostgreSQL's text search parser backtracks over long runs of the characters of paths, hosts, addresses and markup
 * ("/./.", "~/~/", "a_a_", "<!--"): quadratic, 2.5 s for a 19,000-character task description and minutes for a
 * 100,000-character body, spent inside the write (on PGlite, on the service's only thread). search_text reads those
 * characters as spaces before the parser sees the text, in the index and in queries (src/search/SearchRepo.ts), so
 * the words around them are still found (`loss.png` is `loss png` on both sides) and parsing stays linear. The index
 * is rebuilt from the stored documents with it.
 */
export const searchTextLinear = {
  id: 14,
  name: "search: text parsed in linear time",
  sql: `
CREATE FUNCTION search_text(p text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  SELECT translate(p, '/~._<@&:', '        ')
$fn$;

CREATE OR REPLACE FUNCTION search_put(p_lab text, p_kind text, p_ref text, p_title text, p_title_text text, p_body text)
RETURNS void LANGUAGE sql AS $fn$
  INSERT INTO search_documents (lab_id, kind, ref, title, body, tsv, updated_at)
  VALUES (
    p_lab, p_kind, p_ref,
    left(coalesce(p_title, ''), 500),
    left(coalesce(p_body, ''), 100000),
    setweight(to_tsvector('english', search_text(coalesce(p_title_text, ''))), 'A')
      || setweight(to_tsvector('english', search_text(left(coalesce(p_body, ''), 100000))), 'B'),
    now()
  )
  ON CONFLICT (lab_id, kind, ref) DO UPDATE
    SET title = EXCLUDED.title, body = EXCLUDED.body, tsv = EXCLUDED.tsv, updated_at = EXCLUDED.updated_at
$fn$;

-- the stored title is what was indexed at weight A, but for memory (its first line is shown, nothing indexed)
UPDATE search_documents
SET tsv = setweight(to_tsvector('english', search_text(CASE WHEN kind = 'memory' THEN '' ELSE title END)), 'A')
  || setweight(to_tsvector('english', search_text(body)), 'B');
`
}
