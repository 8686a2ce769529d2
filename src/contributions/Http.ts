import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Option, Schema } from "effect"
import { Api } from "../Api.js"
import { InvalidField } from "../common/DomainErrors.js"
import { okPage } from "../http/Envelope.js"
import { Cursor, cursorFromString, pageQueryWith } from "../db/Paging.js"
import { writing } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import type { LabId } from "../labs/LabId.js"
import type { ContributorKind } from "./Contribution.js"
import { Contributions } from "./Contributions.js"
import type { ContributionFilter } from "./ContributionsRepo.js"

const ListCursor = cursorFromString(Cursor)
const SummaryCursor = cursorFromString(
  Schema.Struct({ count: Schema.Int.pipe(Schema.between(0, Number.MAX_SAFE_INTEGER)), contributor: Schema.String.pipe(Schema.maxLength(500)) })
)

interface FilterParams {
  readonly contributor?: string | undefined
  readonly contributorKind?: ContributorKind | undefined
  readonly kind?: string | undefined
  readonly ref?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

interface ListParams extends FilterParams {
  readonly labId: string
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

const checkRange = (from: Date | undefined, to: Date | undefined) =>
  from !== undefined && to !== undefined && from.getTime() > to.getTime()
    ? Effect.fail(new InvalidField({ field: "from", problem: "must not be after to" }))
    : Effect.void

const filterOf = (params: FilterParams): ContributionFilter => ({
  contributor: Option.fromNullable(params.contributor),
  contributorKind: Option.fromNullable(params.contributorKind),
  kind: Option.fromNullable(params.kind),
  ref: Option.fromNullable(params.ref),
  from: Option.fromNullable(params.from),
  to: Option.fromNullable(params.to)
})

/**
 * A filtered list walked by its own cursor: the range checked, the page the url asks for, the service's page of
 * it, and the next cursor encoded.
 */
const filteredPage = <P, A, E, R>(
  lab: Pick<LabRequests, "read">,
  { labId, limit, cursor, ...filters }: ListParams,
  cursorSchema: Schema.Schema<P, string>,
  page: (
    labId: LabId,
    filter: ContributionFilter,
    cursor: Option.Option<P>,
    limit: number
  ) => Effect.Effect<{ readonly items: ReadonlyArray<A>; readonly next: Option.Option<P> }, E, R>
) =>
  lab
    .read(labId, (scope) =>
      Effect.gen(function* () {
        yield* checkRange(filters.from, filters.to)
        const query = yield* pageQueryWith(Schema.decodeUnknownEither(cursorSchema), { limit, cursor })
        return yield* page(scope.labId, filterOf(filters), query.cursor, query.limit)
      })
    )
    .pipe(
      Effect.flatMap((result) =>
        okPage({ items: result.items, nextCursor: Option.getOrNull(Option.map(result.next, Schema.encodeSync(cursorSchema))) })
      )
    )

export const ContributionsHttp = HttpApiBuilder.group(Api, "contributions", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const contributions = yield* Contributions
    return handlers
      .handle("list", ({ urlParams }) => filteredPage(lab, urlParams, ListCursor, contributions.list))
      .handle("summary", ({ urlParams }) => filteredPage(lab, urlParams, SummaryCursor, contributions.summary))
      .handle("record", ({ payload: { labId, ...input } }) =>
        writing(lab, labId, (scope) => contributions.record(scope.labId, scope.principal, input))
      )
  })
)
