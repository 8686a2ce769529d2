import { SqlClient } from "@effect/sql"
import { Context, Effect, Either, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as Database from "../../layers/Database.js"
import * as GitMemory from "../../layers/git/GitMemory.js"
import * as RateLimitStore from "../../layers/RateLimitStore.js"
import { SecretBox } from "../../src/common/SecretBox.js"
import { Files } from "../../src/files/Files.js"
import { systemLab } from "../../src/labs/LabId.js"
import { LabsRepo } from "../../src/labs/LabsRepo.js"
import { DEFAULT_QUOTAS, QuotaLimits } from "../../src/quotas/PlanQuotas.js"
import { Git } from "../../src/sync/Git.js"
import { repoKeyOf } from "../../src/sync/RepoLink.js"
import { SyncEngine } from "../../src/sync/SyncEngine.js"
import { SyncRepo } from "../../src/sync/SyncRepo.js"
import { pushQueueLayer } from "../../src/sync/PushQueueLive.js"
import { gitControls } from "./ModelGit.js"
import { type Driver, SyncModel } from "./SyncModel.js"
import { INITIAL_REMOTE, LOCAL_ONLY } from "./SyncSteps.js"

/**
 * The model-based test's driver on in-memory git and PGlite: the files service and the sync engine, driven directly.
 * A job is what the lab's worker runs (SyncSupervisor's runJob: push the outbox, then pull), and it runs when a step
 * says, so the test knows when each write lands. A failed job records its error, as the worker does.
 */
export const memorySync = () => {
  const controls = gitControls()
  const git = Layer.effectContext(
    Effect.gen(function* () {
      const inner = yield* Git
      const remotes = yield* GitMemory.InMemoryRemotes
      return Context.make(Git, controls.wrap(inner)).pipe(Context.add(GitMemory.InMemoryRemotes, remotes))
    })
  ).pipe(Layer.provide(GitMemory.layer))
  const layer = Layer.mergeAll(Files.Default, SyncEngine.Default, SyncRepo.Default, LabsRepo.Default).pipe(
    Layer.provideMerge(git),
    Layer.provideMerge(pushQueueLayer(() => Effect.void)),
    Layer.provideMerge(Layer.succeed(QuotaLimits, DEFAULT_QUOTAS)),
    Layer.provideMerge(RateLimitStore.layer(Option.none())),
    Layer.provideMerge(SecretBox.layer(Redacted.make(randomBytes(32).toString("hex")))),
    Layer.provideMerge(Database.layer({ kind: "pglite", dataDir: undefined }))
  )
  const runtime = ManagedRuntime.make(layer)
  const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof layer>>) => runtime.runPromise(effect)
  let labs = 0

  /** A fresh lab with a local-only file, linked (auto-push on) to a fresh repository holding INITIAL_REMOTE, pulled. */
  const newLab = async (): Promise<{ readonly model: SyncModel; readonly driver: Driver }> => {
    const model = new SyncModel(true)
    const slug = `model-${++labs}-${randomBytes(3).toString("hex")}`
    const url = `https://git.example.com/team/${slug}.git`
    let actors = 0
    const { labId, initial } = await run(
      Effect.gen(function* () {
        const lab = yield* Effect.orDie(Effect.flatMap(LabsRepo, (r) => r.insert({ slug, name: slug, plan: "team" })))
        const files = yield* Files
        for (const [path, content] of Object.entries(LOCAL_ONLY)) {
          yield* Effect.orDie(files.write(systemLab(lab.id), path, content, { actor: "setup", authorName: "setup", mode: "create-or-replace" }))
        }
        const initial = yield* Effect.flatMap(GitMemory.InMemoryRemotes, (r) => r.pushFromOutside(url, "main", { ...INITIAL_REMOTE }))
        const sync = yield* SyncRepo
        yield* sync.saveLink({ labId: lab.id, repo: url, repoKey: repoKeyOf(url), defaultBranch: "main", autoPush: true, token: Option.none() })
        yield* Effect.flatMap(SyncEngine, (e) => e.pull(systemLab(lab.id), Option.none(), false))
        return { labId: systemLab(lab.id), initial }
      })
    )
    model.outsideCommits.push(initial.commit)

    /** The worker's job: push, then (when asked) pull the whole tree or a directory. A failure is recorded. */
    const job = (pull: Option.Option<Option.Option<string>>, announce: boolean) =>
      run(
        Effect.gen(function* () {
          const engine = yield* SyncEngine
          yield* engine.push(labId)
          if (Option.isSome(pull)) yield* engine.pull(labId, pull.value, announce)
        }).pipe(Effect.catchAll((e) => Effect.asVoid(Effect.flatMap(SyncRepo, (s) => s.recordError(labId, e.message)))))
      )
    const remotes = GitMemory.InMemoryRemotes

    const driver: Driver = {
      write: (path, content) =>
        run(
          Effect.gen(function* () {
            const actor = `op-${++actors}`
            const written = yield* Effect.orDie(
              Effect.flatMap(Files, (f) => f.write(labId, path, content, { actor, authorName: actor, mode: "create-or-replace" }))
            )
            return written.queued ? actor : undefined
          })
        ),
      remove: (path) =>
        run(
          Effect.gen(function* () {
            const actor = `op-${++actors}`
            const removed = yield* Effect.either(Effect.flatMap(Files, (f) => f.remove(labId, path, { actor, authorName: actor })))
            if (Either.isLeft(removed)) {
              if (removed.left._tag === "NotFoundInLab") return undefined
              return yield* Effect.die(removed.left)
            }
            return removed.right.queued ? actor : undefined
          })
        ),
      outside: (edits) =>
        run(Effect.map(Effect.flatMap(remotes, (r) => r.pushFromOutside(url, "main", Object.fromEntries(edits))), (h) => h.commit)),
      webhook: () => job(Option.some(Option.none()), false),
      forcedSync: (subPath) => job(Option.some(Option.fromNullable(subPath)), true),
      drain: () => job(Option.none(), false),
      fault: (fault) => (fault === "down" ? run(Effect.flatMap(remotes, (r) => r.failNext(1))) : Promise.resolve(controls.armPush(fault))),
      pausedPull: (during) => controls.pausedDuring("readBlob", () => job(Option.some(Option.none()), true), during),
      pausedPush: (during) => controls.pausedDuring("push", () => job(Option.none(), false), during),
      // a start-up: the worker catches up (pushes what waits, pulls what it missed)
      restart: () => job(Option.some(Option.none()), false),
      landed: (actors) =>
        run(
          Effect.gen(function* () {
            const waiting = new Map((yield* Effect.flatMap(SyncRepo, (s) => s.pending(labId, 100_000))).map((e) => [e.actor, e]))
            const history = new Set((yield* Effect.flatMap(remotes, (r) => r.log(url, "main"))).map((c) => c.commit))
            return new Set(
              actors.filter((actor) => {
                const entry = waiting.get(actor)
                return entry === undefined || (entry.pushCommit !== null && history.has(entry.pushCommit))
              })
            )
          })
        ),
      quiesce: async () => {
        controls.reset()
        await run(Effect.flatMap(remotes, (r) => r.failNext(0)))
        await job(Option.some(Option.none()), true)
        return run(
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const sync = yield* SyncRepo
            const r = yield* remotes
            const rows = yield* Effect.orDie(sql<{ path: string; content: string }>`SELECT path, content FROM files WHERE lab_id = ${labId}`)
            const link = yield* sync.link(labId)
            return {
              remote: yield* r.tree(url, "main"),
              lab: new Map(rows.map((row) => [row.path, row.content])),
              history: yield* r.log(url, "main"),
              pendingCommits: yield* sync.pendingCount(labId),
              lastError: Option.match(link, { onNone: () => "no link", onSome: (l) => l.lastError })
            }
          })
        )
      }
    }
    return { model, driver }
  }

  return { newLab, stats: controls.stats, close: () => runtime.dispose() }
}
