/**
 * Migration 13, frozen: its text never changes once released (deployments applied it as it is); add a migration instead.
 * Backup archives stored in chunks, restores staged in a table of their own, and the files' bytes a backup holds.
 */
export const backupChunks = {
  id: 13,
  name: "backups: archives in chunks, restores staged, files' bytes per backup",
  sql: `
-- an archive as a sequence of chunks, written as the dump produces them and read one at a time by a download or a
-- restore, so neither holds a whole archive in memory; no lab_id column, so no backup archives the archives
CREATE TABLE backup_chunks (
  backup_id text NOT NULL REFERENCES backups (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (backup_id, seq)
);
ALTER TABLE backup_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

-- the archives stored whole until now, moved into chunks of 1 MiB
INSERT INTO backup_chunks (backup_id, seq, data)
SELECT b.id, g.i, substring(b.archive FROM g.i * 1048576 + 1 FOR 1048576)
FROM backups b, generate_series(0, (length(b.archive) - 1) / 1048576) AS g(i)
WHERE b.archive IS NOT NULL AND length(b.archive) > 0;
UPDATE backups SET archive = NULL WHERE archive IS NOT NULL;

-- the bytes of the lab's files in the archive (the stored-bytes quota's share of a restore); NULL for older backups
ALTER TABLE backups ADD COLUMN file_bytes bigint;

-- the archived rows of a restore, staged in short statements before the restore's one transaction puts them in the lab
CREATE TABLE restore_rows (
  backup_id text NOT NULL REFERENCES backups (id) ON DELETE CASCADE,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  tbl text NOT NULL,
  row json NOT NULL,
  PRIMARY KEY (backup_id, tbl, seq)
);
`
}
