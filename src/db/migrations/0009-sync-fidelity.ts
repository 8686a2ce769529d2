/**
 * Migration 9, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * The commit a push was about to make (a lost answer is told landed or not), and pending writes found by path.
 */
export const syncFidelity = {
  id: 9,
  name: "sync fidelity: pushes told apart after a lost answer, pending writes found by path",
  sql: `
-- the commit a push was about to move the branch to: set before the push, cleared with the entry when it lands,
-- so a push whose answer was lost (a crash, a cut connection) is told landed or not, and never made twice
ALTER TABLE outbox ADD COLUMN push_commit text;
-- a pull asks, path by path, whether a write waits to be pushed
CREATE INDEX outbox_lab_path ON outbox (lab_id, path) WHERE set_aside_at IS NULL;
`
}
