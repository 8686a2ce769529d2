/**
 * Migration 16, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * Each queued write keeps the name of the credential that made it (an API key's name, a JWT's name or subject): the
 * commit it becomes names that person or agent as its author, with the service as committer. Writes queued before
 * this have none and are authored by the service, as they were.
 */
export const outboxAuthor = {
  id: 16,
  name: "outbox: the author of each write",
  sql: `
ALTER TABLE outbox ADD COLUMN author_name text;
`
}
