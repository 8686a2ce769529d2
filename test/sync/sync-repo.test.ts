/**
 * SyncRepo's link and outbox on every storage backend: embedded PGlite always,
 * PostgreSQL too when DATABASE_URL is set (in a fresh schema, dropped afterwards).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx vitest run test/sync/sync-repo.test.ts
 */
import type { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import * as Database from "../../layers/Database.js"
import { LabsRepo } from "../../src/labs/LabsRepo.js"
import { repoKeyOf } from "../../src/sync/RepoLink.js"
import { SyncRepo } from "../../src/sync/SyncRepo.js"
import { postgresInFreshSchema } from "../support/PostgresSchema.js"

const Repositories = Layer.mergeAll(LabsRepo.Default, SyncRepo.Default)

/** A lab linked to `url` with no token. */
const linkedLab = (url = `https://git.example.com/team/${randomBytes(4).toString("hex")}.git`) =>
  Effect.gen(function* () {
    const labs = yield* LabsRepo
    const sync = yield* SyncRepo
    const slug = `sync-${randomBytes(5).toString("hex")}`
    const lab = yield* Effect.orDie(labs.insert({ slug, name: slug, plan: "team" }))
    const link = { labId: lab.id, repo: url, repoKey: repoKeyOf(url), defaultBranch: "main", autoPush: true, token: Option.none() }
    yield* sync.saveLink(link)
    return { labId: lab.id, link }
  })

const contract = (name: string, database: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  layer(Layer.provideMerge(Repositories, database), { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("a link's token: set with its repository, kept when not given, removed with null", () =>
      Effect.gen(function* () {
        const sync = yield* SyncRepo
        const { labId, link } = yield* linkedLab()
        const tokenOf = Effect.map(sync.link(labId), Option.map((l) => [l.tokenSealed, l.tokenRepo]))
        expect(yield* tokenOf).toEqual(Option.some([null, null]))
        yield* sync.saveLink({ ...link, token: Option.some({ sealed: "sealed-1", repo: link.repo, origin: "https://git.example.com" }) })
        expect(yield* tokenOf).toEqual(Option.some(["sealed-1", link.repo]))
        yield* sync.saveLink({ ...link, autoPush: false, token: Option.none() })
        expect(yield* tokenOf).toEqual(Option.some(["sealed-1", link.repo]))
        yield* sync.saveLink({ ...link, token: Option.some(null) })
        expect(yield* tokenOf).toEqual(Option.some([null, null]))
      })
    )

    it.effect("a set-aside write is no longer pending; the newest are listed and all are counted", () =>
      Effect.gen(function* () {
        const sync = yield* SyncRepo
        const { labId } = yield* linkedLab()
        for (let i = 0; i < 23; i++) yield* sync.enqueue(labId, `/.git./${i}`, i % 2 === 0 ? "x" : null, { actor: "key_test", name: "test key" })
        yield* sync.enqueue(labId, "/ok.md", "ok", { actor: "key_test", name: "test key" })
        const queued = yield* sync.pending(labId, 100)
        for (const entry of queued.filter((e) => e.path !== "/ok.md")) yield* sync.setAside(entry.id, `refused ${entry.path}`)
        yield* sync.noteAttempt(labId, "host down")

        expect((yield* sync.pending(labId, 100)).map((e) => e.path)).toEqual(["/ok.md"])
        expect(yield* sync.pendingCount(labId)).toBe(1)
        expect([...(yield* sync.pendingPaths(labId))]).toEqual(["/ok.md"])
        const setAside = yield* sync.setAsideOf(labId)
        expect(setAside.count).toBe(23)
        expect(setAside.newest).toHaveLength(20)
        // newest first: set aside in queue order, so the last queued comes first
        expect(setAside.newest[0]).toEqual({ path: "/.git./22", deleted: false, reason: "refused /.git./22", setAsideAt: expect.any(Date) })
        expect(setAside.newest[1]).toMatchObject({ path: "/.git./21", deleted: true })

        const other = yield* linkedLab()
        expect(yield* sync.setAsideOf(other.labId)).toEqual({ count: 0, newest: [] })
      })
    )
  })

contract("SyncRepo on embedded PGlite (in memory)", Database.layer({ kind: "pglite", dataDir: undefined }))

const databaseUrl = process.env.DATABASE_URL

describe.runIf(databaseUrl !== undefined && databaseUrl !== "")("PostgreSQL (DATABASE_URL)", () => {
  const schema = `test_${randomBytes(6).toString("hex")}`
  contract(`SyncRepo on PostgreSQL, schema ${schema}`, postgresInFreshSchema(databaseUrl ?? "", schema, (url) => Database.layer({ kind: "postgresql", url })))
})
