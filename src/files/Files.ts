import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { Conflict, NotFound } from "../http/Errors.js"
import { Quotas } from "../quotas/Quotas.js"
import { SyncRepo } from "../sync/SyncRepo.js"
import { SyncSignal } from "../sync/SyncSignal.js"
import { blobId, byteLength } from "./BlobId.js"
import type { File, FileSummary } from "./File.js"
import { FilesRepo } from "./FilesRepo.js"

export interface WriteOptions {
  /** Who writes: a key or user id, or an orchestrator's name. */
  readonly actor: string
  /** Optimistic concurrency: the blob id the file must have now. */
  readonly expectedSha?: string | undefined
  /** `create-or-replace` (POST) or `update` (PATCH: the file must exist). */
  readonly mode: "create-or-replace" | "update"
}

/**
 * A lab's files. Every write and delete goes through here, from the REST API and
 * from the orchestrator's write_file alike: the file and, when auto-push is on,
 * its outbox entry are stored in one transaction, then the lab's sync worker is
 * told to push. An acknowledged write is in the database before the answer.
 */
export class Files extends Effect.Service<Files>()("Files", {
  dependencies: [FilesRepo.Default, SyncRepo.Default, Quotas.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* FilesRepo
    const sync = yield* SyncRepo
    const signal = yield* SyncSignal
    const quotas = yield* Quotas

    const read = (labId: string, path: string) =>
      Effect.flatMap(
        repo.find(labId, path),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: `no file ${path}` })),
          onSome: Effect.succeed
        })
      )

    const list = (labId: string, prefix: string, after: Option.Option<string>, limit: number) =>
      Effect.map(repo.list(labId, prefix, after, limit), (rows) => {
        const items: ReadonlyArray<FileSummary> = rows.slice(0, limit)
        const last = items.at(-1)
        return { items, next: rows.length > limit && last ? Option.some(last.path) : Option.none<string>() }
      })

    const checkExpected = (current: Option.Option<File>, path: string, expected: string | undefined) => {
      if (expected === undefined) return Effect.void
      const actual = Option.map(current, (f) => f.sha)
      return Option.contains(actual, expected)
        ? Effect.void
        : Effect.fail(
            new Conflict({
              message: Option.match(actual, {
                onNone: () => `${path} does not exist; it cannot be at ${expected}`,
                onSome: (sha) => `${path} changed: it is at ${sha}, not ${expected}; read it again and retry`
              })
            })
          )
    }

    /** Queue the change for the linked repository when auto-push is on; true when queued. */
    const queuePush = (labId: string, path: string, content: string | null, actor: string) =>
      Effect.flatMap(sync.link(labId), (link) =>
        Option.isSome(link) && link.value.autoPush ? Effect.as(sync.enqueue(labId, path, content, actor), true) : Effect.succeed(false)
      )

    const write = (labId: string, path: string, content: string, options: WriteOptions) =>
      Effect.gen(function* () {
        const current = yield* repo.findForUpdate(labId, path)
        if (options.mode === "update" && Option.isNone(current)) return yield* new NotFound({ message: `no file ${path}` })
        yield* checkExpected(current, path, options.expectedSha)
        if (Option.isNone(current)) {
          const blocker = yield* repo.blocking(labId, path)
          if (Option.isSome(blocker)) {
            return yield* new Conflict({ message: `${path} collides with ${blocker.value}: a path is either a file or a directory` })
          }
        }
        const now = new Date()
        const file: File = {
          labId,
          path,
          content,
          size: byteLength(content),
          sha: blobId(content),
          source: "api",
          fromGit: Option.match(current, { onNone: () => false, onSome: (f) => f.fromGit }),
          createdAt: Option.match(current, { onNone: () => now, onSome: (f) => f.createdAt }),
          updatedAt: now
        }
        // the same content as stored is still the user's word on the file: with auto-push on it is queued (a commit
        // only if the repository, which may have moved since the lab last pulled, holds something else)
        if (Option.isSome(current) && current.value.sha === file.sha) {
          return { file: current.value, created: false, queued: yield* queuePush(labId, path, content, options.actor) }
        }
        // a write that grows the lab's stored bytes must fit its plan (QUOTA_STORED_BYTES); a sync never asks
        yield* quotas.storedBytes(labId, file.size - Option.match(current, { onNone: () => 0, onSome: (f) => f.size }))
        yield* repo.upsert(file)
        const queued = yield* queuePush(labId, path, content, options.actor)
        return { file, created: Option.isNone(current), queued }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.tap(({ queued }) => (queued ? signal.outboxChanged(labId) : Effect.void)))

    const remove = (labId: string, path: string, options: { readonly actor: string; readonly expectedSha?: string | undefined }) =>
      Effect.gen(function* () {
        const current = yield* repo.findForUpdate(labId, path)
        if (Option.isNone(current)) return yield* new NotFound({ message: `no file ${path}` })
        yield* checkExpected(current, path, options.expectedSha)
        yield* repo.remove(labId, path)
        const queued = yield* queuePush(labId, path, null, options.actor)
        return { file: current.value, queued }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.tap(({ queued }) => (queued ? signal.outboxChanged(labId) : Effect.void)))

    return { read, list, write, remove }
  })
}) {}
