import { Effect } from "effect"
import { type Access, CurrentPrincipal, type Principal } from "../auth/Principal.js"
import type { CheckedLab, LabId } from "../labs/LabId.js"
import type { AccessDenied, OverRateLimit, UnknownLab } from "../common/DomainErrors.js"
import { countedOnce } from "../common/RequestContext.js"
import { Labs, withinBudget } from "../labs/Labs.js"
import { type AsHttp, domainErrorsAsHttp } from "./DomainErrorsHttp.js"

/** What a lab-scoped handler works with once the request's credential was checked against the lab it names. */
export interface LabScope {
  readonly labId: LabId
  readonly lab: CheckedLab
  readonly principal: Principal
  /** who the activity log names: the principal's id */
  readonly actor: string
  /** who a write's commit names as its author: the credential's name */
  readonly authorName: string
}

type Run = <A, E, R>(
  labRef: string,
  body: (scope: LabScope) => Effect.Effect<A, E, R>
) => Effect.Effect<A, AsHttp<E | UnknownLab | AccessDenied | OverRateLimit>, R | CurrentPrincipal>

/**
 * The preamble every lab-scoped handler shares: check the credential against the lab (403 / 404 as `Labs.accessAs`
 * decides) and count the request against the lab's budget (429 over it; the window recorded for the answer's
 * headers), hand the body the checked lab and the principal, and send domain failures as envelopes.
 */
export class LabRequests extends Effect.Service<LabRequests>()("LabRequests", {
  dependencies: [Labs.Default],
  effect: Effect.map(Labs, (labs) => {
    // direct steps rather than Effect.gen, and the principal read once (Labs.accessAs takes it): every lab-scoped
    // request runs this
    const run =
      (access: Access): Run =>
      (labRef, body) =>
        domainErrorsAsHttp(
          Effect.flatMap(CurrentPrincipal, (principal) =>
            countedOnce((counted) => labs.accessAs(principal, labRef, access, counted)).pipe(
              Effect.flatMap(withinBudget),
              Effect.flatMap((lab) => body({ labId: lab.id, lab, principal, actor: principal.id, authorName: principal.name }))
            )
          )
        )
    return { read: run("read"), write: run("write") }
  })
}) {}
