/**
 * Migration 12, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * A stored token is bound to its repository, not only to its origin (a hosted service puts every repository on one
 * origin). A token already stored is bound to the repository linked now when it was given for that link's origin
 * as the link spells it; any other waits for a new token. The service compares repositories after parsing them.
 */
export const syncLinkTokenRepository = {
  id: 12,
  name: "sync link: token bound to its repository",
  sql: `
ALTER TABLE lab_repos ADD COLUMN token_repo text;
UPDATE lab_repos SET token_repo = repo
  WHERE token_sealed IS NOT NULL
    AND token_origin = substring(repo from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*');
`
}
