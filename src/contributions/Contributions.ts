import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps, type ResourceDeps } from "../activity/ResourceService.js"
import { Agents } from "../agents/Agents.js"
import type { Principal } from "../auth/Principal.js"
import { newId } from "../common/Ids.js"
import { References } from "../common/References.js"
import type { Cursor } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import type { Contribution, ContributorKind, RecordContribution } from "./Contribution.js"
import { type ContributionFilter, ContributionsRepo, type RecordedRow, type SummaryCursor } from "./ContributionsRepo.js"
import { inTransaction } from "../db/Transaction.js"

/** The kind of contributor a credential is: keys (and the operator's key) vs people signed in with a JWT. */
export const kindOfPrincipal = (principal: Principal): ContributorKind => (principal.kind === "jwt" ? "user" : "credential")

/** A page of `limit` from the `limit + 1` rows read, with where the next one starts when there is one. */
const pageOf = <A, C>(rows: ReadonlyArray<A>, limit: number, cursorOf: (last: A) => C) => {
  const items = rows.slice(0, limit)
  const last = items.at(-1)
  return { items, next: rows.length > limit && last !== undefined ? Option.some(cursorOf(last)) : Option.none<C>() }
}

interface Deps extends ResourceDeps<ContributionsRepo> {
  readonly agents: Agents
  readonly references: References
}

const contributionOf = (row: RecordedRow): Contribution => ({
  id: row.id,
  labId: row.labId,
  contributor: row.contributor,
  contributorKind: row.contributorKind,
  kind: row.kind,
  ref: row.ref,
  summary: row.summary,
  source: "recorded",
  at: row.createdAt
})

/**
 * Record a contribution and its activity entry, credited to an agent of the
 * lab (422 when there is no such agent, 409 when it is retired; its
 * lastActiveAt moves) or else to the caller. A `ref` shaped like one of
 * this service's ids must name a resource of the lab (422).
 */
const record = (deps: Deps, labId: LabId, principal: Principal, input: Omit<RecordContribution, "labId">) =>
  Effect.gen(function* () {
    const now = new Date()
    // a ref with the shape of this service's ids (exp_…, paper_…) names a resource of the lab
    yield* deps.references.requireIfId(labId, "ref", input.ref)
    if (input.agentId !== undefined) {
      const agent = yield* deps.agents.requireAgent(labId, input.agentId)
      yield* deps.agents.touch(labId, agent.id, now)
    }
    const row: RecordedRow = {
      id: newId("ctb"),
      labId,
      contributor: input.agentId ?? principal.id,
      contributorKind: input.agentId !== undefined ? "agent" : kindOfPrincipal(principal),
      kind: input.kind,
      ref: input.ref ?? null,
      summary: input.summary,
      recordedBy: principal.id,
      createdAt: now
    }
    yield* deps.repo.insert(row)
    yield* deps.activity.record({
      labId,
      kind: "contribution.recorded",
      ref: row.id,
      actor: principal.id,
      message: `Recorded a ${row.kind} contribution by ${row.contributor}`,
      data: { contributor: row.contributor, contributorKind: row.contributorKind, kind: row.kind, ref: row.ref }
    })
    return contributionOf(row)
  }).pipe(inTransaction(deps.sql))

export class Contributions extends Effect.Service<Contributions>()("Contributions", {
  dependencies: [ContributionsRepo.Default, ActivityRepo.Default, Agents.Default, References.Default],
  effect: Effect.gen(function* () {
    const deps: Deps = yield* Effect.all({ ...resourceDeps(ContributionsRepo), agents: Agents, references: References })
    const { repo } = deps
    return {
      list: (labId: LabId, filter: ContributionFilter, cursor: Option.Option<Cursor>, limit: number) =>
        Effect.map(repo.list(labId, filter, cursor, limit), (rows) =>
          pageOf<Contribution, Cursor>(rows, limit, (last) => ({ createdAt: last.at, id: last.id }))
        ),
      summary: (labId: LabId, filter: ContributionFilter, cursor: Option.Option<SummaryCursor>, limit: number) =>
        Effect.map(repo.summary(labId, filter, cursor, limit), (rows) =>
          pageOf(rows, limit, (last): SummaryCursor => ({ count: last.count, contributor: last.contributor }))
        ),
      record: (labId: LabId, principal: Principal, input: Omit<RecordContribution, "labId">) =>
        record(deps, labId, principal, input)
    }
  })
}) {}
