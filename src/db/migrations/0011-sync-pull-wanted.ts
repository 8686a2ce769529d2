/**
 * Migration 11, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * A pull asked for (a webhook) is recorded, so that a replica that dies before pulling leaves it to another.
 */
export const syncPullWanted = {
  id: 11,
  name: "sync: a pull asked for is recorded until done",
  sql: `
-- set when a webhook asks for a pull, cleared by the pull that started after it; the replicas' sweep pulls a lab
-- whose request waited too long (its replica died)
ALTER TABLE lab_repos ADD COLUMN pull_wanted_at timestamptz;
`
}
