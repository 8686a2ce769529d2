import * as SqlClient from "@effect/sql/SqlClient"
import type { Context, Effect, Option } from "effect"
import { orNotFound } from "../common/DomainErrors.js"
import type { Page } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { ActivityRepo } from "./ActivityRepo.js"

/** What a service of lab resources writes with: the SQL client (its transactions), its repository, the activity feed. */
export interface ResourceDeps<R> {
  readonly sql: SqlClient.SqlClient
  readonly repo: R
  readonly activity: ActivityRepo
}

/** The services `ResourceDeps` are, for `Effect.all`: the service's own needs may be spread in beside them. */
export const resourceDeps = <I, R>(repo: Context.Tag<I, R>) => ({ sql: SqlClient.SqlClient, repo, activity: ActivityRepo })

interface Readable<A, F> {
  readonly list: (labId: LabId, filter: F) => Effect.Effect<Page<A>>
  readonly find: (labId: LabId, id: string) => Effect.Effect<Option.Option<A>>
}

/** A service's reads as its repository answers them: `get` is 404 naming `resource` when the lab has no such id. */
export const resourceReads = <A, F>(resource: string, repo: Readable<A, F>) => ({
  list: (labId: LabId, filter: F) => repo.list(labId, filter),
  get: (labId: LabId, id: string) => orNotFound(resource, id)(repo.find(labId, id))
})
