/**
 * Refusing another lab costs the same whether that lab exists or not: the lab lookups (the database queries of the
 * access check) a credential's requests make are counted for a lab of someone else's and for an id no lab has, and
 * must be equal, so a refusal's timing tells a caller nothing about other labs. On PGlite; on PostgreSQL too with
 * DATABASE_URL or E2E_DATABASE_URL (a fresh schema).
 */
import { Effect, Either, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Principal } from "../../src/auth/Principal.js"
import { AccessDenied } from "../../src/common/DomainErrors.js"
import type { Lab } from "../../src/labs/Lab.js"
import { Labs } from "../../src/labs/Labs.js"
import { LabsRepo } from "../../src/labs/LabsRepo.js"
import { RateLimits } from "../../src/ratelimit/RateLimits.js"
import { freshDatabase } from "../support/LabFixture.js"
import { TestEnvironment } from "../support/TestLayers.js"

/** The lab repository, its lookups counted. */
const counted = (counter: { lookups: number }) =>
  Layer.effect(
    LabsRepo,
    Effect.map(LabsRepo, (repo) =>
      LabsRepo.make({
        ...repo,
        findByRef: (ref) => Effect.zipRight(Effect.sync(() => counter.lookups++), repo.findByRef(ref)),
        findBySlugs: (slugs) => Effect.zipRight(Effect.sync(() => counter.lookups++), repo.findBySlugs(slugs))
      })
    )
  ).pipe(Layer.provide(LabsRepo.Default))

const suite = (name: string, databaseUrl: string | undefined) =>
  describe(`refusing another lab on ${name}`, () => {
    const counter = { lookups: 0 }
    let runtime: ManagedRuntime.ManagedRuntime<Labs, unknown>
    let drop: () => Promise<void> = async () => {}
    let mine: Lab
    let theirs: Lab

    beforeAll(async () => {
      const db = await freshDatabase(databaseUrl)
      drop = db.drop
      const layer = Labs.DefaultWithoutDependencies.pipe(
        Layer.provide(Layer.merge(counted(counter), RateLimits.Default)),
        Layer.provide(TestEnvironment(db.settings))
      )
      runtime = ManagedRuntime.make(layer)
      const suffix = Date.now().toString(36)
      mine = await runtime.runPromise(Effect.flatMap(Labs, (labs) => labs.create({ slug: `mine-${suffix}`, name: "Mine", plan: "team" })))
      theirs = await runtime.runPromise(Effect.flatMap(Labs, (labs) => labs.create({ slug: `theirs-${suffix}`, name: "Theirs", plan: "team" })))
    }, 60_000)
    afterAll(async () => {
      await runtime?.dispose()
      await drop()
    })

    /** Lookups made while `principal` asks for `ref` five times, and what the last time answered. */
    const lookupsFor = async (principal: Principal, ref: string) => {
      const before = counter.lookups
      let answer: Either.Either<Lab, unknown> = Either.left("not asked")
      for (let i = 0; i < 5; i++) {
        answer = await runtime.runPromise(Effect.either(Effect.flatMap(Labs, (labs) => labs.authorize(principal, ref, "read"))))
      }
      return { lookups: counter.lookups - before, answer }
    }

    it("makes as many lab lookups for a lab that exists as for one that does not, and refuses both alike", async () => {
      const principal: Principal = { id: "key_mine", kind: "api_key", name: "mine", scopes: [`lab:${mine.slug}:rw`], expiresAt: null }
      // its own lab, once, as any of its requests would
      expect(Either.map((await lookupsFor(principal, mine.id)).answer, (lab) => lab.id)).toEqual(Either.right(mine.id))
      for (const [existing, missing] of [
        [theirs.id, "lab_0000000000000000"],
        [theirs.slug, "nobody-has-this-slug"]
      ] as const) {
        const foreign = await lookupsFor(principal, existing)
        const absent = await lookupsFor(principal, missing)
        expect(foreign.lookups).toBe(absent.lookups)
        expect(Either.isLeft(foreign.answer) && foreign.answer.left).toBeInstanceOf(AccessDenied)
        expect(Either.isLeft(absent.answer) && absent.answer.left).toBeInstanceOf(AccessDenied)
      }
      // and its own lab is still found, by id and by slug
      expect(Either.map((await lookupsFor(principal, mine.slug)).answer, (lab) => lab.id)).toEqual(Either.right(mine.id))
    })

    it("looks up only the lab a request names, however many labs the credential's scopes name", async () => {
      // a user in 200 labs (most of them gone since): each request used to look up every one of them
      const scopes = [`lab:${mine.slug}:rw`, ...Array.from({ length: 199 }, (_, i) => `lab:gone-${i}:rw`)]
      const principal: Principal = { id: "user_many", kind: "api_key", name: "many", scopes, expiresAt: null }
      for (const ref of [mine.id, theirs.id, "lab_0000000000000001"]) {
        // five requests: at most the first reaches the database
        const { lookups, answer } = await lookupsFor(principal, ref)
        expect(lookups).toBeLessThanOrEqual(1)
        expect(Either.isRight(answer)).toBe(ref === mine.id)
      }
    })

    it("still tells the operator a missing lab from one that exists", async () => {
      const admin: Principal = { id: "admin", kind: "admin", name: "operator", scopes: ["admin"], expiresAt: null }
      expect(Either.map((await lookupsFor(admin, theirs.id)).answer, (lab) => lab.id)).toEqual(Either.right(theirs.id))
      const missing = (await lookupsFor(admin, "lab_0000000000000000")).answer
      expect(Either.isLeft(missing) && missing.left).toMatchObject({ _tag: "UnknownLab" })
    })
  })

const postgresUrl = process.env["E2E_DATABASE_URL"] ?? process.env["DATABASE_URL"]

suite("pglite", undefined)
if (postgresUrl !== undefined && postgresUrl !== "") suite("postgresql", postgresUrl)
