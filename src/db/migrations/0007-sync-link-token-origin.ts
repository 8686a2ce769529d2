/**
 * Migration 7, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * A stored token was given for its link's repository: bind it to that origin (scheme://host[:port]; the service
 * compares origins after parsing them, so case and default ports need no care here). Outbox entries can be set aside.
 */
export const syncLinkTokenOrigin = {
  id: 7,
  name: "sync link: token origin, outbox set-aside",
  sql: `
ALTER TABLE lab_repos ADD COLUMN token_origin text;
UPDATE lab_repos SET token_origin = substring(repo from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*')
  WHERE token_sealed IS NOT NULL;

ALTER TABLE outbox ADD COLUMN set_aside_at timestamptz;
ALTER TABLE outbox ADD COLUMN set_aside_reason text;
`
}
