/**
 * Lists: awaiting a list call gives its first page; iterating it with
 * `for await` yields every item across pages, asking for the next page with
 * `meta.next_cursor` until it is null.
 */

export interface ListMeta {
  readonly request_id: string
  readonly timestamp: string
  readonly next_cursor: string | null
  readonly has_more: boolean
  readonly [key: string]: unknown
}

/** One page: `data` as the service sent it, and how to get the next. */
export class Page<Item, Data = ReadonlyArray<Item>> {
  constructor(
    readonly data: Data,
    readonly meta: ListMeta,
    private readonly fetchPage: (cursor: string) => Promise<Page<Item, Data>>
  ) {}

  get items(): ReadonlyArray<Item> {
    return Array.isArray(this.data) ? (this.data as ReadonlyArray<Item>) : []
  }

  hasNextPage(): boolean {
    return typeof this.meta.next_cursor === "string"
  }

  /** The next page, or null after the last. */
  async nextPage(): Promise<Page<Item, Data> | null> {
    return typeof this.meta.next_cursor === "string" ? this.fetchPage(this.meta.next_cursor) : null
  }
}

/** What a list call returns: a promise of the first page, and an async iterable of every item. */
export class PagePromise<Item, Data = ReadonlyArray<Item>> implements PromiseLike<Page<Item, Data>>, AsyncIterable<Item> {
  private first: Promise<Page<Item, Data>> | undefined

  constructor(private readonly load: () => Promise<Page<Item, Data>>) {}

  private firstPage(): Promise<Page<Item, Data>> {
    this.first ??= this.load()
    return this.first
  }

  then<A = Page<Item, Data>, B = never>(
    onFulfilled?: ((page: Page<Item, Data>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null
  ): Promise<A | B> {
    return this.firstPage().then(onFulfilled, onRejected)
  }

  /** Every page, the first included. */
  async *pages(): AsyncGenerator<Page<Item, Data>, void, undefined> {
    let page: Page<Item, Data> | null = await this.firstPage()
    while (page !== null) {
      yield page
      page = await page.nextPage()
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.pages()) yield* page.items
  }
}
