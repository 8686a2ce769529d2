import { Effect } from "effect"
import type { LabId } from "../labs/LabId.js"
import { ok, okPage } from "./Envelope.js"
import type { LabRequests, LabScope } from "./LabRequests.js"
import { type Page, pageQuery, type PageQuery } from "../db/Paging.js"

/**
 * The handler chains the lab resources share, each sent as the envelope: `listed` (page query → the service's
 * list → a page), `reading` / `writing` (a body run under the checked lab → one value), and the CRUD shorthands
 * `created`, `fetched`, `updated`, `removed` built on them.
 */
export type Lab = Pick<LabRequests, "read" | "write">

export interface ListParams {
  readonly labId: string
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** A list request: the page its url asks for plus the rest of its url parameters, handed to `list`. */
export const listed = <P extends ListParams, A, E, R>(
  lab: Lab,
  { labId, limit, cursor, ...filter }: P,
  list: (labId: LabId, query: PageQuery & Omit<P, keyof ListParams>) => Effect.Effect<Page<A>, E, R>
) =>
  lab
    .read(labId, (scope) => Effect.flatMap(pageQuery({ limit, cursor }), (page) => list(scope.labId, { ...page, ...filter })))
    .pipe(Effect.flatMap(okPage))

/** A read under the checked lab, its value sent as the envelope. */
export const reading = <A, E, R>(lab: Lab, labRef: string, body: (scope: LabScope) => Effect.Effect<A, E, R>) =>
  lab.read(labRef, body).pipe(Effect.flatMap(ok))

/** A write under the checked lab, its value sent as the envelope. */
export const writing = <A, E, R>(lab: Lab, labRef: string, body: (scope: LabScope) => Effect.Effect<A, E, R>) =>
  lab.write(labRef, body).pipe(Effect.flatMap(ok))

/** `create(labId, input, actor)` with the payload less its labId. */
export const created = <P extends { readonly labId: string }, A, E, R>(
  lab: Lab,
  { labId, ...input }: P,
  create: (labId: LabId, input: Omit<P, "labId">, actor: string) => Effect.Effect<A, E, R>
) => writing(lab, labId, (scope) => create(scope.labId, input, scope.actor))

/** `get(labId, id)`. */
export const fetched = <I, A, E, R>(lab: Lab, labRef: string, id: I, get: (labId: LabId, id: I) => Effect.Effect<A, E, R>) =>
  reading(lab, labRef, (scope) => get(scope.labId, id))

/**
 * `update(labId, id, patch, actor)` with the payload less its labId: any write on one item by its id and a body
 * (a chat's new message too).
 */
export const updated = <I, P extends { readonly labId: string }, A, E, R>(
  lab: Lab,
  id: I,
  { labId, ...patch }: P,
  update: (labId: LabId, id: I, patch: Omit<P, "labId">, actor: string) => Effect.Effect<A, E, R>
) => writing(lab, labId, (scope) => update(scope.labId, id, patch, scope.actor))

/** `remove(labId, id, actor)`. */
export const removed = <I, A, E, R>(
  lab: Lab,
  labRef: string,
  id: I,
  remove: (labId: LabId, id: I, actor: string) => Effect.Effect<A, E, R>
) => writing(lab, labRef, (scope) => remove(scope.labId, id, scope.actor))
