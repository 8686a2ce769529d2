/**
 * One contract for the repositories, run on every storage backend: embedded
 * PGlite always, PostgreSQL too when DATABASE_URL is set. Each PostgreSQL run
 * works in a fresh schema of its own, dropped afterwards, so concurrent runs on
 * one server never see each other's rows.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx vitest run test/db/repositories.test.ts
 *
 * Tests share one database per backend, so each one works on rows of its own
 * (unique slugs, owners, issuers) and never asserts on the whole table.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import { randomBytes } from "node:crypto"
import * as Database from "../../layers/Database.js"
import { type ApiKey, ApiKeyId } from "../../src/auth/ApiKey.js"
import { ApiKeysRepo } from "../../src/auth/ApiKeysRepo.js"
import { UsersRepo } from "../../src/auth/UsersRepo.js"
import { migrations } from "../../src/db/Migrations.js"
import { runMigrations } from "../../src/db/Migrator.js"
import { isUniqueViolation } from "../../src/db/SqlErrors.js"
import type { File } from "../../src/files/File.js"
import { FilesRepo } from "../../src/files/FilesRepo.js"
import type { Page } from "../../src/db/Paging.js"
import { PageParams, type PageQuery, pageQuery as toPageQuery } from "../../src/db/Paging.js"
import { systemLab } from "../../src/labs/LabId.js"
import { LabsRepo } from "../../src/labs/LabsRepo.js"
import { type Task, TaskId } from "../../src/tasks/Task.js"
import { TasksRepo } from "../../src/tasks/TasksRepo.js"
import { postgresInFreshSchema } from "../support/PostgresSchema.js"

// ---------------------------------------------------------------------------
// helpers

const unique = (prefix: string) => `${prefix}-${randomBytes(5).toString("hex")}`

/** A page request exactly as a client sends it: `?limit=…&cursor=…`. */
/** A lab with a fresh slug starting `prefix`. */
const newLab = (prefix: string, name: string, plan: "free" | "team" = "free") =>
  Effect.flatMap(LabsRepo, (labs) => labs.insert({ slug: unique(prefix), name, plan }))

const PageRequest = Schema.Struct(PageParams)
const pageQuery = (limit: number, cursor: string | null = null): Effect.Effect<PageQuery> =>
  Schema.decodeUnknown(PageRequest)(cursor === null ? { limit: String(limit) } : { limit: String(limit), cursor }).pipe(
    Effect.flatMap(toPageQuery),
    Effect.orDie
  )

/** Follow next cursors from the first page to the last; returns every page. */
const walk = <A>(limit: number, fetch: (query: PageQuery) => Effect.Effect<Page<A>>) =>
  Effect.gen(function* () {
    const pages: Array<ReadonlyArray<A>> = []
    let cursor: string | null = null
    do {
      const page: Page<A> = yield* fetch(yield* pageQuery(limit, cursor))
      pages.push(page.items)
      cursor = page.nextCursor
      if (pages.length > 1_000) return yield* Effect.die("pagination does not end")
    } while (cursor !== null)
    return pages
  })

/** Newest first, ties broken by id: the order every list promises. */
const newestFirst = <A extends { readonly createdAt: Date; readonly id: string }>(rows: ReadonlyArray<A>) =>
  [...rows].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))

const apiKey = (fields: Partial<ApiKey> & Pick<ApiKey, "createdBy">): ApiKey => ({
  id: ApiKeyId.make(`key_${randomBytes(8).toString("hex")}`),
  name: "a key",
  prefix: "lsk_abcd",
  scopes: ["admin"],
  expiresAt: null,
  revokedAt: null,
  lastUsedAt: null,
  createdAt: new Date(),
  ...fields
})

const task = (labId: string, fields: Partial<Task> = {}): Task => {
  const now = new Date()
  return {
    id: TaskId.make(`task_${randomBytes(8).toString("hex")}`),
    labId,
    title: "a task",
    description: "",
    status: "todo",
    createdAt: now,
    updatedAt: now,
    ...fields
  }
}

const Names = Schema.Array(Schema.Struct({ name: Schema.String }))
const Ids = Schema.Array(Schema.Struct({ id: Schema.Number }))
const CurrentSchema = Schema.Tuple(Schema.Struct({ schema: Schema.String }))

const Repositories = Layer.mergeAll(LabsRepo.Default, ApiKeysRepo.Default, UsersRepo.Default, TasksRepo.Default, FilesRepo.Default)

// ---------------------------------------------------------------------------
// the contract

interface Backend {
  readonly name: string
  readonly database: Layer.Layer<SqlClient.SqlClient, unknown>
  /** The schema the tables must land in (PostgreSQL runs use a fresh one). */
  readonly schema: string
}

const repositoryContract = (backend: Backend) =>
  layer(Layer.provideMerge(Repositories, backend.database), { excludeTestServices: true, timeout: "60 seconds" })(
    backend.name,
    (it) => {
      describe("migrations", () => {
        it.effect("create the tables in the connection's schema, and running them again is harmless", () =>
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            // the layer ran them once already; run them again, then twice at once
            yield* runMigrations
            yield* Effect.all([runMigrations, runMigrations], { concurrency: "unbounded" })

            const [current] = yield* Schema.decodeUnknown(CurrentSchema)(yield* sql`SELECT current_schema() AS schema`)
            expect(current.schema).toBe(backend.schema)
            const tables = yield* Schema.decodeUnknown(Names)(
              yield* sql`SELECT table_name AS name FROM information_schema.tables
                         WHERE table_schema = current_schema() ORDER BY table_name`
            )
            expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(["api_keys", "labs", "schema_migrations", "tasks", "users"]))
            const applied = yield* Schema.decodeUnknown(Ids)(yield* sql`SELECT id FROM schema_migrations ORDER BY id`)
            expect(applied.map((row) => row.id)).toEqual(migrations.map((m) => m.id))
          })
        )
      })

      describe("labs", () => {
        it.effect("insert returns the lab, found again by id and by slug", () =>
          Effect.gen(function* () {
            const labs = yield* LabsRepo
            const slug = unique("find")
            const lab = yield* labs.insert({ slug, name: "Find me", plan: "pro" })
            expect(lab).toMatchObject({ slug, name: "Find me", plan: "pro" })
            expect(lab.id).toMatch(/^lab_/)

            expect(yield* labs.findByRef(lab.id)).toEqual(Option.some(lab))
            expect(yield* labs.findByRef(slug)).toEqual(Option.some(lab))
            expect(yield* labs.findByRef(unique("missing"))).toEqual(Option.none())
            expect(yield* labs.findBySlugs([slug, unique("missing")])).toEqual([lab])
          })
        )

        it.effect("a taken slug fails as a unique violation and leaves the first lab alone", () =>
          Effect.gen(function* () {
            const labs = yield* LabsRepo
            const slug = unique("dup")
            const first = yield* labs.insert({ slug, name: "First", plan: "free" })
            const error = yield* Effect.flip(labs.insert({ slug, name: "Second", plan: "team" }))
            expect(isUniqueViolation(error)).toBe(true)
            expect(yield* labs.findByRef(slug)).toEqual(Option.some(first))
            // an unrelated failure is not mistaken for one
            expect(isUniqueViolation(new Error("23505"))).toBe(false)
          })
        )

        it.effect("list walks keyset pages newest first, each lab once, and filters by slug", () =>
          Effect.gen(function* () {
            const labs = yield* LabsRepo
            const inserted = yield* Effect.forEach([1, 2, 3, 4, 5], (n) => labs.insert({ slug: unique(`page${n}`), name: `Lab ${n}`, plan: "free" }))
            const slugs = inserted.map((lab) => lab.slug)

            const pages = yield* walk(2, (query) => labs.list(query, slugs))
            expect(pages.map((page) => page.length)).toEqual([2, 2, 1])
            expect(pages.flat()).toEqual(newestFirst(inserted))

            const [one, other] = inserted
            if (!one || !other) return yield* Effect.die("inserted too few")
            const some = yield* labs.list(yield* pageQuery(10), [one.slug, other.slug])
            expect(some).toEqual({ items: newestFirst([one, other]), nextCursor: null })
            expect(yield* labs.list(yield* pageQuery(10), [])).toEqual({ items: [], nextCursor: null })

            const everything = (yield* walk(100, (query) => labs.list(query, "all"))).flat()
            expect(everything).toEqual(expect.arrayContaining(inserted))
            expect(new Set(everything.map((lab) => lab.id)).size).toBe(everything.length)
          })
        )
      })

      describe("api keys", () => {
        it.effect("round-trip scopes, millisecond timestamps and a null expiry", () =>
          Effect.gen(function* () {
            const keys = yield* ApiKeysRepo
            const owner = unique("owner")
            const expiring = apiKey({
              createdBy: owner,
              scopes: ["lab:alpha:rw", "lab:beta-2:r", "admin"],
              createdAt: new Date("2024-05-06T07:08:09.123Z"),
              expiresAt: new Date("2031-01-02T03:04:05.999Z")
            })
            const forever = apiKey({ createdBy: owner, scopes: [], createdAt: new Date("2024-05-06T07:08:09.001Z") })
            yield* keys.insert(expiring, unique("hash"))
            yield* keys.insert(forever, unique("hash"))

            expect(yield* keys.findById(expiring.id)).toEqual(Option.some(expiring))
            expect(yield* keys.findById(forever.id)).toEqual(Option.some(forever))
            expect(yield* keys.findById(ApiKeyId.make(unique("key")))).toEqual(Option.none())
          })
        )

        it.effect("useByHash finds a live key and notes its use; a revoked key is not found", () =>
          Effect.gen(function* () {
            const keys = yield* ApiKeysRepo
            const key = apiKey({ createdBy: unique("owner") })
            const hash = unique("hash")
            yield* keys.insert(key, hash)

            const used = yield* keys.useByHash(hash)
            expect(Option.map(used, (k) => k.id)).toEqual(Option.some(key.id))
            expect(Option.flatMap(used, (k) => Option.fromNullable(k.lastUsedAt))._tag).toBe("Some")
            expect(yield* keys.useByHash(unique("other-hash"))).toEqual(Option.none())

            yield* keys.revoke(key.id)
            expect(yield* keys.useByHash(hash)).toEqual(Option.none())
            const revokedAt = Option.flatMap(yield* keys.findById(key.id), (k) => Option.fromNullable(k.revokedAt))
            expect(revokedAt._tag).toBe("Some")

            // revoking again keeps the first revocation time
            yield* keys.revoke(key.id)
            expect(Option.flatMap(yield* keys.findById(key.id), (k) => Option.fromNullable(k.revokedAt))).toEqual(revokedAt)
          })
        )

        it.effect("list by owner shows only that owner's keys (and the key itself); 'all' shows everyone's", () =>
          Effect.gen(function* () {
            const keys = yield* ApiKeysRepo
            const alice = unique("alice")
            const bob = unique("bob")
            const base = Date.now()
            const alices = [0, 1, 2].map((n) => apiKey({ createdBy: alice, createdAt: new Date(base + n) }))
            // a key that lists keys sees itself too, even though an admin created it
            const bobsOwn = apiKey({ createdBy: unique("admin") })
            const bobs = [apiKey({ createdBy: bob })]
            yield* Effect.forEach([...alices, ...bobs, bobsOwn], (key) => keys.insert(key, unique("hash")))

            const alicePages = yield* walk(2, (query) => keys.list(query, alice))
            expect(alicePages.map((page) => page.length)).toEqual([2, 1])
            expect(alicePages.flat()).toEqual(newestFirst(alices))
            expect((yield* keys.list(yield* pageQuery(10), bob)).items).toEqual(bobs)
            expect((yield* keys.list(yield* pageQuery(10), bobsOwn.id)).items).toEqual([bobsOwn])

            const all = (yield* walk(100, (query) => keys.list(query, "all"))).flat()
            expect(all).toEqual(expect.arrayContaining([...alices, ...bobs, bobsOwn]))
          })
        )
      })

      describe("users", () => {
        it.effect("upsert gives the same id for the same issuer and subject, a new one otherwise", () =>
          Effect.gen(function* () {
            const users = yield* UsersRepo
            const sql = yield* SqlClient.SqlClient
            const issuer = `https://${unique("idp")}.example`
            const id = yield* users.upsert(issuer, "subject-1", "Ada")
            expect(id).toMatch(/^user_/)
            expect(yield* users.upsert(issuer, "subject-1", null)).toBe(id)
            expect(yield* users.upsert(issuer, "subject-2", "Ada")).not.toBe(id)
            expect(yield* users.upsert(`${issuer}/other`, "subject-1", "Ada")).not.toBe(id)

            // a later sign-in without a name keeps the known one
            const names = yield* Schema.decodeUnknown(Names)(yield* sql`SELECT name FROM users WHERE id = ${id}`)
            expect(names).toEqual([{ name: "Ada" }])
          })
        )
      })

      describe("tasks", () => {
        it.effect("list is scoped to the lab, filters by status and pages through ties on created_at", () =>
          Effect.gen(function* () {
            const tasks = yield* TasksRepo
            const lab = yield* newLab("tasks", "Tasks")
            const other = yield* newLab("tasks-other", "Other")
            // three tasks share one timestamp, so the page boundary falls inside a tie
            const same = new Date("2025-03-04T05:06:07.089Z")
            const mine = [
              task(lab.id, { status: "todo", createdAt: same, updatedAt: same }),
              task(lab.id, { status: "done", createdAt: same, updatedAt: same }),
              task(lab.id, { status: "done", createdAt: same, updatedAt: same }),
              task(lab.id, { status: "in_progress", title: "with a description", description: "multi\nline ✓" })
            ]
            const theirs = task(other.id, { status: "done" })
            yield* Effect.forEach([...mine, theirs], (t) => tasks.insert(t))

            const none = Option.none<Task["status"]>()
            const pages = yield* walk(2, (query) => tasks.list(systemLab(lab.id), { ...query, status: none }))
            expect(pages.map((page) => page.length)).toEqual([2, 2])
            expect(pages.flat()).toEqual(newestFirst(mine))

            const done = yield* walk(1, (query) => tasks.list(systemLab(lab.id), { ...query, status: Option.some("done") }))
            expect(done.flat()).toEqual(newestFirst(mine.filter((t) => t.status === "done")))
            expect((yield* tasks.list(systemLab(other.id), { ...(yield* pageQuery(10)), status: none })).items).toEqual([theirs])
          })
        )

        it.effect("a page started before new inserts goes on without repeating or skipping rows", () =>
          Effect.gen(function* () {
            const tasks = yield* TasksRepo
            const lab = yield* newLab("stable", "Stable")
            const base = Date.parse("2025-01-01T00:00:00.000Z")
            const old = [0, 1, 2, 3].map((n) => task(lab.id, { createdAt: new Date(base + n * 1000) }))
            yield* Effect.forEach(old, (t) => tasks.insert(t))

            const none = Option.none<Task["status"]>()
            const first = yield* tasks.list(systemLab(lab.id), { ...(yield* pageQuery(2)), status: none })
            yield* tasks.insert(task(lab.id)) // newer than everything
            const second = yield* tasks.list(systemLab(lab.id), { ...(yield* pageQuery(2, first.nextCursor)), status: none })
            expect([...first.items, ...second.items]).toEqual(newestFirst(old))
          })
        )

        it.effect("delete finds nothing through the wrong lab, and removes the task through its own", () =>
          Effect.gen(function* () {
            const tasks = yield* TasksRepo
            const lab = yield* newLab("del", "Delete")
            const other = yield* newLab("del-other", "Other")
            const doomed = task(lab.id, { title: "doomed" })
            yield* tasks.insert(doomed)
            const none = Option.none<Task["status"]>()

            expect(yield* tasks.remove(systemLab(other.id), doomed.id)).toEqual(Option.none())
            expect((yield* tasks.list(systemLab(lab.id), { ...(yield* pageQuery(10)), status: none })).items).toEqual([doomed])

            expect(yield* tasks.remove(systemLab(lab.id), doomed.id)).toEqual(Option.some(doomed))
            expect((yield* tasks.list(systemLab(lab.id), { ...(yield* pageQuery(10)), status: none })).items).toEqual([])
            expect(yield* tasks.remove(systemLab(lab.id), doomed.id)).toEqual(Option.none())
          })
        )
      })

      describe("files", () => {
        it.effect("a bulk upsert stores every file as given, however awkward its text, and updates on a second pass", () =>
          Effect.gen(function* () {
            const files = yield* FilesRepo
            const lab = yield* newLab("files", "Files", "team")
            // what an array literal must escape: quotes, braces, commas, backslashes, NULL, empty, newlines, tabs, non-ASCII
            const texts = ['say "hi"', "{a,b}", "a,b", "back\\slash \\", "NULL", "", "line\nline\r\n\tend", "ünïcödé ✓ 𝛼", "'single'"]
            const at = new Date(Math.floor(Date.now() / 1000) * 1000)
            const file = (i: number, content: string, fromGit: boolean): File => ({
              labId: lab.id,
              path: `/bulk/${i} {x}, "y".md`,
              content,
              size: Buffer.byteLength(content),
              sha: `${i}`.padStart(40, "0"),
              source: fromGit ? "git" : "api",
              fromGit,
              createdAt: at,
              updatedAt: at
            })
            const many = Array.from({ length: 1_203 }, (_, i) => file(i, texts[i % texts.length] ?? "", i % 2 === 0))
            expect((yield* files.storePulled(lab.id, many.map((f) => ({ file: f, expected: null })))).added).toHaveLength(1_203)
            for (const i of [0, 1, 2, 3, 4, 5, 6, 7, 8, 600, 1_202]) {
              expect(yield* files.find(lab.id, `/bulk/${i} {x}, "y".md`)).toEqual(Option.some(many[i]))
            }
            const states = yield* files.states(lab.id, many.map((f) => f.path))
            expect(states.size).toBe(1_203)

            const later = new Date(at.getTime() + 5_000)
            const stored = file(3, "", true).sha
            const next = { ...file(3, "changed", true), sha: "f".repeat(40), updatedAt: later }
            // only from the blob the pull read: a stale expectation, or an insert over an existing file, changes nothing
            expect(yield* files.storePulled(lab.id, [{ file: next, expected: "e".repeat(40) }, { file: file(4, "x", true), expected: null }]))
              .toEqual({ added: [], updated: [] })
            expect(yield* files.storePulled(lab.id, [{ file: next, expected: stored }])).toEqual({ added: [], updated: [next.path] })
            const changed = Option.getOrThrow(yield* files.find(lab.id, `/bulk/3 {x}, "y".md`))
            expect([changed.content, changed.size, changed.updatedAt, changed.createdAt]).toEqual(["changed", 7, later, at])
            // removals too: only files from git, still at the blob the pull read
            const removed = yield* files.removePulled(lab.id, [
              { path: next.path, expected: stored },
              { path: `/bulk/1 {x}, "y".md`, expected: file(1, "", false).sha },
              { path: `/bulk/2 {x}, "y".md`, expected: file(2, "", true).sha }
            ])
            expect(removed).toEqual([`/bulk/2 {x}, "y".md`])
          })
        )
      })

      describe("transactions", () => {
        it.effect("a failing transaction rolls back every write made through the repositories", () =>
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const labs = yield* LabsRepo
            const tasks = yield* TasksRepo
            const keys = yield* ApiKeysRepo
            const slug = unique("rollback")
            const key = apiKey({ createdBy: unique("owner") })
            const hash = unique("hash")

            const error = yield* sql
              .withTransaction(
                Effect.gen(function* () {
                  const lab = yield* labs.insert({ slug, name: "Rolled back", plan: "free" })
                  yield* tasks.insert(task(lab.id))
                  yield* keys.insert(key, hash)
                  // the writes are visible inside the transaction...
                  expect(yield* labs.findByRef(slug)).toEqual(Option.some(lab))
                  return yield* Effect.fail("boom" as const)
                })
              )
              .pipe(Effect.flip)
            expect(error).toBe("boom")

            // ...and gone after it
            expect(yield* labs.findByRef(slug)).toEqual(Option.none())
            expect(yield* keys.findById(key.id)).toEqual(Option.none())
            expect(yield* keys.useByHash(hash)).toEqual(Option.none())
          })
        )

        it.effect("a transaction that dies rolls back too; one that succeeds commits", () =>
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const labs = yield* LabsRepo
            const died = unique("died")
            const exit = yield* sql
              .withTransaction(Effect.zipRight(labs.insert({ slug: died, name: "Died", plan: "free" }), Effect.die("crash")))
              .pipe(Effect.exit)
            expect(exit._tag).toBe("Failure")
            expect(yield* labs.findByRef(died)).toEqual(Option.none())

            const kept = unique("kept")
            const lab = yield* sql.withTransaction(labs.insert({ slug: kept, name: "Kept", plan: "team" }))
            expect(yield* labs.findByRef(kept)).toEqual(Option.some(lab))
          })
        )

        it.effect("the database stays usable after a failed statement inside a transaction", () =>
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const labs = yield* LabsRepo
            const taken = yield* newLab("taken", "Taken")
            const error = yield* sql
              .withTransaction(labs.insert({ slug: taken.slug, name: "Again", plan: "free" }))
              .pipe(Effect.flip)
            expect(isUniqueViolation(error)).toBe(true)
            const next = yield* newLab("after", "After")
            expect(yield* labs.findByRef(next.id)).toEqual(Option.some(next))
          })
        )
      })
    }
  )

// ---------------------------------------------------------------------------
// the backends

repositoryContract({
  name: "repositories on embedded PGlite (in memory)",
  database: Database.layer({ kind: "pglite", dataDir: undefined }),
  schema: "public"
})

const databaseUrl = process.env.DATABASE_URL

describe.runIf(databaseUrl !== undefined && databaseUrl !== "")("PostgreSQL (DATABASE_URL)", () => {
  const schema = `test_${randomBytes(6).toString("hex")}`
  repositoryContract({
    name: `repositories on PostgreSQL, schema ${schema}`,
    database: postgresInFreshSchema(databaseUrl ?? "", schema, (url) => Database.layer({ kind: "postgresql", url })),
    schema
  })
})
