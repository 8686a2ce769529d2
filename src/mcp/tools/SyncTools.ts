import { Effect, Option, Schema } from "effect"
import { UpstreamFailed } from "../../common/DomainErrors.js"
import { isDiskFull } from "../../db/DiskFull.js"
import { RepoDirectory } from "../../files/File.js"
import { Quotas } from "../../quotas/Quotas.js"
import { SyncResult, SyncStatus } from "../../sync/RepoLink.js"
import { Sync } from "../../sync/Sync.js"
import { defineTool, toolInput } from "../McpTool.js"

/** The sync tools: the lab's link to its git repository, as `GET /api/v1/sync` and `POST /api/v1/sync` serve it. */
export const syncTools = Effect.map(Effect.all([Sync, Quotas]), ([sync, quotas]) => [
  defineTool({
    name: "sync_status",
    toolset: "sync",
    access: "read",
    description:
      "The lab's git link: repository, branch, last sync (time, commit), writes not yet pushed, writes set aside and why, and the last error in words. Use it to check that your writes reached git.",
    input: toolInput({}),
    output: SyncStatus,
    run: (_, call) => sync.status(call.labId)
  }),
  defineTool({
    name: "sync_now",
    toolset: "sync",
    access: "write",
    description:
      "Pull the linked repository now (all of it, or one directory with subPath) instead of waiting for its webhook. Counts against the lab's forced syncs per minute.",
    input: toolInput({ subPath: Schema.optional(RepoDirectory) }),
    output: SyncResult,
    hints: { idempotent: true, openWorld: true },
    run: ({ subPath }, call) =>
      Effect.zipRight(quotas.forcedSync(call.lab), sync.syncNow(call.labId, Option.fromNullable(subPath))).pipe(
        // the lab's store out of space is the disk's failure, not the host's (as at the HTTP edge)
        Effect.catchTag("GitError", (e) => (isDiskFull(e) ? Effect.die(e) : Effect.fail(new UpstreamFailed({ reason: `git: ${e.message}` }))))
      )
  })
])
