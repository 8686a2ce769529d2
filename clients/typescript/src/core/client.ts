/**
 * What every generated resource calls: one request under the client's policy,
 * shaped as the operation answers (the envelope's `data`, a bare body, text,
 * bytes, or a page of a list).
 */
import { Page, PagePromise, type ListMeta } from "./pagination.js"
import { Transport, type Call, type ClientOptions, type RequestOptions } from "./transport.js"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/** Renames a body's client-side keys to the wire's (e.g. expectedSha → sha). */
export const toWire = (body: object, wireNames: Readonly<Record<string, string>>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(body).map(([key, value]) => [wireNames[key] ?? key, value]))

export class BaseClient {
  protected readonly transport: Transport

  constructor(options: ClientOptions = {}) {
    this.transport = new Transport(options)
  }

  get baseUrl(): string {
    return this.transport.baseUrl
  }

  /** @internal one call; the answer as the operation shapes it */
  async call<A>(call: Call, options?: RequestOptions): Promise<A> {
    const answer = await this.transport.request(call, options)
    if (call.answer === "envelope") return (isRecord(answer.body) ? answer.body["data"] : undefined) as A
    return answer.body as A
  }

  /** @internal a list call: the first page on await, every item on `for await` */
  list<Item, Data = ReadonlyArray<Item>>(call: Call, options?: RequestOptions): PagePromise<Item, Data> {
    const fetchPage = async (cursor: string | undefined): Promise<Page<Item, Data>> => {
      const query = cursor === undefined ? call.query : { ...call.query, cursor }
      const answer = await this.transport.request({ ...call, query }, options)
      const body = isRecord(answer.body) ? answer.body : {}
      const meta = (isRecord(body["meta"]) ? body["meta"] : { next_cursor: null }) as ListMeta
      return new Page<Item, Data>(body["data"] as Data, meta, fetchPage)
    }
    return new PagePromise(() => fetchPage(undefined))
  }
}
