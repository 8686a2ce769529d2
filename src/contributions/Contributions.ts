import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import type { Principal } from "../auth/Principal.js"
import { newId } from "../common/Ids.js"
import { References } from "../common/References.js"
import { Agents } from "../agents/Agents.js"
import type { Cursor } from "../http/Pagination.js"
import type { Contribution, ContributorKind, RecordContribution } from "./Contribution.js"
import { type ContributionFilter, ContributionsRepo, type RecordedRow, type SummaryCursor } from "./ContributionsRepo.js"

/** The kind of contributor a credential is: keys (and the operator's key) vs people signed in with a JWT. */
export const kindOfPrincipal = (principal: Principal): ContributorKind => (principal.kind === "jwt" ? "user" : "credential")

export class Contributions extends Effect.Service<Contributions>()("Contributions", {
  dependencies: [ContributionsRepo.Default, ActivityRepo.Default, Agents.Default, References.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ContributionsRepo
    const activity = yield* ActivityRepo
    const agents = yield* Agents
    const references = yield* References

    const list = (labId: string, filter: ContributionFilter, cursor: Option.Option<Cursor>, limit: number) =>
      Effect.map(repo.list(labId, filter, cursor, limit), (rows) => {
        const items: ReadonlyArray<Contribution> = rows.slice(0, limit)
        const last = items.at(-1)
        return {
          items,
          next: rows.length > limit && last ? Option.some<Cursor>({ createdAt: last.at, id: last.id }) : Option.none<Cursor>()
        }
      })

    const summary = (labId: string, filter: ContributionFilter, cursor: Option.Option<SummaryCursor>, limit: number) =>
      Effect.map(repo.summary(labId, filter, cursor, limit), (rows) => {
        const items = rows.slice(0, limit)
        const last = items.at(-1)
        return {
          items,
          next:
            rows.length > limit && last
              ? Option.some<SummaryCursor>({ count: last.count, contributor: last.contributor })
              : Option.none<SummaryCursor>()
        }
      })

    /**
     * Record a contribution and its activity entry, credited to an agent of the
     * lab (422 when there is no such agent, 409 when it is retired; its
     * lastActiveAt moves) or else to the caller. A `ref` shaped like one of
     * this service's ids must name a resource of the lab (422).
     */
    const record = (labId: string, principal: Principal, input: Omit<RecordContribution, "labId">) =>
      Effect.gen(function* () {
        const now = new Date()
        // a ref with the shape of this service's ids (exp_…, paper_…) names a resource of the lab
        yield* references.requireIfId(labId, "ref", input.ref)
        if (input.agentId !== undefined) {
          const agent = yield* agents.requireAgent(labId, input.agentId)
          yield* agents.touch(labId, agent.id, now)
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
        yield* repo.insert(row)
        yield* activity.record({
          labId,
          kind: "contribution.recorded",
          ref: row.id,
          actor: principal.id,
          message: `Recorded a ${row.kind} contribution by ${row.contributor}`,
          data: { contributor: row.contributor, contributorKind: row.contributorKind, kind: row.kind, ref: row.ref }
        })
        const contribution: Contribution = {
          id: row.id,
          labId,
          contributor: row.contributor,
          contributorKind: row.contributorKind,
          kind: row.kind,
          ref: row.ref,
          summary: row.summary,
          source: "recorded",
          at: row.createdAt
        }
        return contribution
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    return { list, summary, record }
  })
}) {}
