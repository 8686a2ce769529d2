/**
 * Migration 11, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * A pull asked for (a webhook) is recorded, so that a replica that dies before pulling leaves it to another.
 */
export const syncPullWanted = {
  id: 11,
  name: "sync: a pull asked for is recorded until done",
  sql: `
-- a row when a webhook asked for a pull, removed by the pull that started after it; the replicas' sweep pulls a lab
-- whose request waited too long (its replica died). A table of its own: writing it never waits for a pull's
-- transaction, which holds the lab's lab_repos row
CREATE TABLE sync_pull_requests (
  lab_id text PRIMARY KEY REFERENCES labs (id) ON DELETE CASCADE,
  wanted_at timestamptz NOT NULL
);
`
}
