import * as SqlClient from "@effect/sql/SqlClient"
import { Cache, Duration, Effect, Exit, Option } from "effect"
import { type Access, canAccess, isAdmin, labSlugs, type Principal } from "../auth/Principal.js"
import { AccessDenied, OverRateLimit, StateConflict, UnknownLab } from "../common/DomainErrors.js"
import type { Plan } from "../common/Schemas.js"
import { isUniqueViolation } from "../db/SqlErrors.js"
import type { PageQuery } from "../db/Paging.js"
import type { CountedWindow } from "../common/RequestContext.js"
import { PLAN_LIMITS, RateLimits } from "../ratelimit/RateLimits.js"
import type { CreateLab, Lab } from "./Lab.js"
import { type CheckedLab, checked } from "./LabId.js"
import { LabsRepo } from "./LabsRepo.js"

/** Labs are read on every lab-scoped request; a short cache keeps that off the database. */
const CACHE_TTL = Duration.minutes(1)
/**
 * A reference no lab has is remembered this long: a refusal then costs one cache lookup whether the lab exists or
 * not, and a lab created on another replica is reachable here this soon (on this one at once: create forgets).
 */
const MISS_TTL = Duration.seconds(1)
/** Lab references remembered at most (each lab twice: by id and by slug); the least recently used go first. */
const CACHE_CAPACITY = 20_000

const PLAN_RANK: Record<Plan, number> = { free: 0, pro: 1, team: 2 }

/** Labs by id and by slug; a reference no lab has is remembered briefly too (MISS_TTL). */
const makeLabCache = (repo: LabsRepo) =>
  Effect.gen(function* () {
    const cache = yield* Cache.makeWith({
      capacity: CACHE_CAPACITY,
      // run in the first caller's fiber: uninterruptible, so a caller that goes away does not fail the others waiting
      lookup: (ref: string) => Effect.uninterruptible(repo.findByRef(ref)),
      // a failed lookup (a lost or busy database) is never remembered: the next request asks again
      timeToLive: (exit) => (Exit.isFailure(exit) ? Duration.zero : Option.isSome(exit.value) ? CACHE_TTL : MISS_TTL)
    })

    // a new lab's id and slug may be remembered as misses: forgotten, so it is reachable at once
    const forget = (lab: Lab) => Effect.zipRight(cache.invalidate(lab.id), cache.invalidate(lab.slug))

    // A Cache runs its lookup with the context it was made with, outside the caller's transaction: asked inside one
    // (a quota check while a write holds it), the lookup waited for that transaction on PGlite's single session and
    // never came back. Inside a transaction the lab is read in it; everywhere else from the cache.
    const find = (ref: string): Effect.Effect<Option.Option<Lab>> =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
        Option.isSome(transaction) ? repo.findByRef(ref) : cache.get(ref)
      )

    return { find, forget }
  })

/** Why a principal gets no lab: 403 whether or not the lab exists, so ids of other labs leak nothing; 404 for the operator. */
const refusal = (principal: Principal, ref: string, access: Access): UnknownLab | AccessDenied =>
  isAdmin(principal)
    ? new UnknownLab({ ref })
    : new AccessDenied({
        reason: access === "write" ? `this credential cannot write to lab ${ref}` : `this credential cannot read lab ${ref}`
      })

/**
 * The lab a request names, if the principal may read (or write) it (else `refusal`): one lookup of the named lab
 * (by id or slug), whoever asks and however many labs its scopes name. Misses are cached like labs (MISS_TTL), so
 * another lab costs the same to refuse whether it exists or not: the refusal's timing tells nothing.
 */
const authorizeIn =
  (find: (ref: string) => Effect.Effect<Option.Option<Lab>>) =>
  (principal: Principal, ref: string, access: Access): Effect.Effect<Lab, UnknownLab | AccessDenied> =>
    Effect.flatMap(find(ref), (lab) =>
      Option.isSome(lab) && (isAdmin(principal) || canAccess(principal, lab.value.slug, access))
        ? Effect.succeed(lab.value)
        : Effect.fail(refusal(principal, ref, access))
    )

/**
 * What a request naming a lab gets once its credential was checked: the lab, and the window of the lab's budget it
 * was counted in (none for the operator, counted against its own limit only, or when the request was counted already).
 */
export interface LabAccess {
  readonly lab: CheckedLab
  readonly window: Option.Option<CountedWindow>
}

/** The lab's budget (its per-minute and per-day windows) is counted under one account, whichever credential sends. */
const budgetAccount = (lab: Lab) => `lab:${lab.id}`

/**
 * The lab, if its budget's window has room; over it, 429. Minting keys buys nothing: every credential of the lab
 * spends the same budget.
 */
export const withinBudget = ({ lab, window }: LabAccess): Effect.Effect<CheckedLab, OverRateLimit> => {
  if (Option.isNone(window) || window.value.decision.allowed) return Effect.succeed(lab)
  const { limit, retryAfter } = window.value.decision
  return Effect.fail(
    new OverRateLimit({
      reason: `lab ${lab.slug} is over its plan's rate limit of ${limit} requests, shared by all its credentials; retry in ${retryAfter} s`,
      retryAfter
    })
  )
}

export class Labs extends Effect.Service<Labs>()("Labs", {
  dependencies: [LabsRepo.Default, RateLimits.Default],
  effect: Effect.gen(function* () {
    const repo = yield* LabsRepo
    const rateLimits = yield* RateLimits
    const { find, forget } = yield* makeLabCache(repo)
    const authorize = authorizeIn(find)

    /**
     * `authorize`, and the request counted against the lab's budget unless `counted` (the windows the request was
     * counted in so far) holds it already; the caller records the window and refuses over it (`withinBudget`).
     */
    const accessAs = (
      principal: Principal,
      ref: string,
      access: Access,
      counted: ReadonlyArray<CountedWindow>
    ): Effect.Effect<LabAccess, UnknownLab | AccessDenied> =>
      Effect.flatMap(authorize(principal, ref, access), (lab) => {
        const account = budgetAccount(lab)
        if (isAdmin(principal) || counted.some((window) => window.account === account)) {
          return Effect.succeed({ lab: checked(lab), window: Option.none() })
        }
        return Effect.map(rateLimits.consume(account, PLAN_LIMITS[lab.plan]), (decision) => ({
          lab: checked(lab),
          window: Option.some({ account, decision })
        }))
      })

    /** The plan the principal's limits follow: the highest of the labs its scopes name. */
    const planOf = (principal: Principal) =>
      Effect.map(Effect.forEach(labSlugs(principal), find), (labs): Plan =>
        labs.reduce<Plan>(
          (best, lab) => (Option.isSome(lab) && PLAN_RANK[lab.value.plan] > PLAN_RANK[best] ? lab.value.plan : best),
          "free"
        )
      )

    const create = (input: CreateLab) =>
      repo.insert(input).pipe(
        Effect.tap(forget),
        Effect.catchAll((e) =>
          isUniqueViolation(e)
            ? new StateConflict({ resource: "lab", id: input.slug, problem: `a lab with slug ${input.slug} exists` })
            : Effect.die(e)
        )
      )

    const list = (principal: Principal, query: PageQuery) => repo.list(query, isAdmin(principal) ? "all" : labSlugs(principal))

    return { find, authorize, accessAs, planOf, create, list }
  })
}) {}
