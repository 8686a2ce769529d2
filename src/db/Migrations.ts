import { foundation } from "./migrations/0001-foundation.js"
import { filesAndGitSync } from "./migrations/0002-files-and-git-sync.js"
import { researchResources } from "./migrations/0003-research-resources.js"
import { search } from "./migrations/0004-search.js"
import { searchQueue } from "./migrations/0005-search-queue.js"
import { searchQueueVersionPerStatement } from "./migrations/0006-search-queue-version-per-statement.js"
import { syncLinkTokenOrigin } from "./migrations/0007-sync-link-token-origin.js"
import { storedBytesQuota } from "./migrations/0008-quotas-stored-bytes.js"
import { syncFidelity } from "./migrations/0009-sync-fidelity.js"
import { recordsQuota } from "./migrations/0010-records-quota.js"
import { syncPullWanted } from "./migrations/0011-sync-pull-wanted.js"
import { syncLinkTokenRepository } from "./migrations/0012-sync-link-token-repository.js"
import { backupChunks } from "./migrations/0013-backup-chunks.js"
import { searchTextLinear } from "./migrations/0014-search-text-linear.js"
import { restoreInSteps } from "./migrations/0015-restore-in-steps.js"
import { outboxAuthor } from "./migrations/0016-outbox-author.js"
import { idempotencyKeys } from "./migrations/0017-idempotency-keys.js"

export interface Migration {
  readonly id: number
  readonly name: string
  readonly sql: string
}

/**
 * The schema, as an ordered list of migrations, one frozen file each under migrations/. Applied once each, in order,
 * at start (see Migrator.ts). Never edit a released migration (test/db/migrations-frozen.test.ts holds their
 * checksums): add a new one, with its SQL written out as a literal, not built from code that may change.
 */
export const migrations: ReadonlyArray<Migration> = [
  foundation,
  filesAndGitSync,
  researchResources,
  search,
  searchQueue,
  searchQueueVersionPerStatement,
  syncLinkTokenOrigin,
  storedBytesQuota,
  syncFidelity,
  recordsQuota,
  syncPullWanted,
  syncLinkTokenRepository,
  backupChunks,
  searchTextLinear,
  restoreInSteps,
  outboxAuthor,
  idempotencyKeys
]
