import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option } from "effect"
import { NotFoundInLab, orNotFound, StateConflict } from "../common/DomainErrors.js"
import type { LabId } from "../labs/LabId.js"
import { Quotas } from "../quotas/Quotas.js"
import { blobId, byteLength } from "./BlobId.js"
import type { File, FileSummary } from "./File.js"
import { PushQueue } from "./PushQueue.js"
import { FilesRepo } from "./FilesRepo.js"

export interface WriteOptions {
  /** Who writes: a key or user id, or an orchestrator's name. */
  readonly actor: string
  /** The credential's name (an API key's name, a JWT's name or subject): the author of the write's commit. */
  readonly authorName: string
  /** Optimistic concurrency: the blob id the file must have now. */
  readonly expectedSha?: string | undefined
  /** `create-or-replace` (POST) or `update` (PATCH: the file must exist). */
  readonly mode: "create-or-replace" | "update"
}

export interface RemoveOptions {
  readonly actor: string
  readonly authorName: string
  readonly expectedSha?: string | undefined
}

const RESOURCE = "file"

/** What the operations below work with. */
interface Deps {
  readonly repo: FilesRepo
  readonly pushes: PushQueue["Type"]
  readonly quotas: Quotas
}

const noFile = (path: string) => new NotFoundInLab({ resource: RESOURCE, id: path })

const conflict = (path: string, problem: string) => new StateConflict({ resource: RESOURCE, id: path, problem })

/** With `expected`, the file must be at that blob now. */
const checkExpected = (current: Option.Option<File>, path: string, expected: string | undefined) => {
  if (expected === undefined) return Effect.void
  const actual = Option.map(current, (f) => f.sha)
  if (Option.contains(actual, expected)) return Effect.void
  return Effect.fail(
    conflict(
      path,
      Option.match(actual, {
        onNone: () => `${path} does not exist; it cannot be at ${expected}`,
        onSome: (sha) => `${path} changed: it is at ${sha}, not ${expected}; read it again and retry`
      })
    )
  )
}

/** Queue the change for the linked repository when auto-push is on; true when queued. */
const queuePush = (deps: Deps, labId: LabId, path: string, content: string | null, options: WriteOptions | RemoveOptions) =>
  deps.pushes.queue(labId, path, content, { actor: options.actor, name: options.authorName })

/** A new path must not be a file where another needs a directory, nor the reverse. */
const checkNoCollision = (deps: Deps, labId: LabId, path: string) =>
  Effect.flatMap(deps.repo.blocking(labId, path), (blocker) =>
    Option.isSome(blocker)
      ? Effect.fail(conflict(path, `${path} collides with ${blocker.value}: a path is either a file or a directory`))
      : Effect.void
  )

const fileWith = (labId: LabId, path: string, content: string, current: Option.Option<File>): File => {
  const now = new Date()
  return {
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
}

/** The write itself, in the caller's transaction. */
const writeFile = (deps: Deps, labId: LabId, path: string, content: string, options: WriteOptions) =>
  Effect.gen(function* () {
    const current = yield* deps.repo.findForUpdate(labId, path)
    if (options.mode === "update" && Option.isNone(current)) return yield* noFile(path)
    yield* checkExpected(current, path, options.expectedSha)
    if (Option.isNone(current)) yield* checkNoCollision(deps, labId, path)
    const file = fileWith(labId, path, content, current)
    // the same content as stored is still the user's word on the file: with auto-push on it is queued (a commit
    // only if the repository, which may have moved since the lab last pulled, holds something else)
    if (Option.isSome(current) && current.value.sha === file.sha) {
      return { file: current.value, created: false, queued: yield* queuePush(deps, labId, path, content, options) }
    }
    // a write that grows the lab's stored bytes must fit its plan (QUOTA_STORED_BYTES); a sync never asks
    yield* deps.quotas.storedBytes(labId, file.size - Option.match(current, { onNone: () => 0, onSome: (f) => f.size }))
    yield* deps.repo.upsert(file)
    const queued = yield* queuePush(deps, labId, path, content, options)
    return { file, created: Option.isNone(current), queued }
  })

/** The delete itself, in the caller's transaction. */
const removeFile = (deps: Deps, labId: LabId, path: string, options: RemoveOptions) =>
  Effect.gen(function* () {
    const current = yield* deps.repo.findForUpdate(labId, path)
    if (Option.isNone(current)) return yield* noFile(path)
    yield* checkExpected(current, path, options.expectedSha)
    yield* deps.repo.remove(labId, path)
    const queued = yield* queuePush(deps, labId, path, null, options)
    return { file: current.value, queued }
  })

/**
 * A lab's files. Every write and delete goes through here, from the REST API and
 * from the orchestrator's write_file alike: the file and, when auto-push is on,
 * its outbox entry are stored in one transaction, then the lab's sync worker is
 * told to push. An acknowledged write is in the database before the answer.
 */
export class Files extends Effect.Service<Files>()("Files", {
  dependencies: [FilesRepo.Default, Quotas.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pushes = yield* PushQueue
    const deps: Deps = { repo: yield* FilesRepo, pushes, quotas: yield* Quotas }

    /** One transaction, then the sync worker told when something was queued. */
    const committed = <A extends { readonly queued: boolean }, E, R>(labId: LabId, change: Effect.Effect<A, E, R>) =>
      change.pipe(
        sql.withTransaction,
        Effect.catchTag("SqlError", Effect.die),
        Effect.tap(({ queued }) => (queued ? pushes.wake(labId) : Effect.void))
      )

    const read = (labId: LabId, path: string) => orNotFound(RESOURCE, path)(deps.repo.find(labId, path))

    const list = (labId: LabId, prefix: string, after: Option.Option<string>, limit: number) =>
      Effect.map(deps.repo.list(labId, prefix, after, limit), (rows) => {
        const items: ReadonlyArray<FileSummary> = rows.slice(0, limit)
        const last = items.at(-1)
        return { items, next: rows.length > limit && last ? Option.some(last.path) : Option.none<string>() }
      })

    return {
      read,
      list,
      write: (labId: LabId, path: string, content: string, options: WriteOptions) =>
        committed(labId, writeFile(deps, labId, path, content, options)),
      remove: (labId: LabId, path: string, options: RemoveOptions) => committed(labId, removeFile(deps, labId, path, options))
    }
  })
}) {}
