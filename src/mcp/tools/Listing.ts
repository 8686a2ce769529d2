import { Effect } from "effect"
import type { DomainError } from "../../common/DomainErrors.js"
import { type Page, pageQuery, type PageQuery } from "../../db/Paging.js"
import type { ToolCall } from "../McpTool.js"

/** What a list tool's arguments always carry: the lab, and the page as ToolPage takes it. */
interface ListArgs {
  readonly labId?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/**
 * A list tool's `run` as a REST list handler runs (LabHandlers.listed): the page its arguments ask for (a cursor this
 * service did not issue is InvalidField), the other arguments as the list's filter.
 */
export const listed =
  <P extends ListArgs, A, E extends DomainError>(list: (labId: ToolCall["labId"], query: PageQuery & Omit<P, keyof ListArgs>) => Effect.Effect<Page<A>, E>) =>
  ({ labId: _labId, limit, cursor, ...filter }: P, call: ToolCall) =>
    Effect.flatMap(pageQuery({ limit, cursor }), (page) => list(call.labId, { ...page, ...filter }))
