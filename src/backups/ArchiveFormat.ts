import { StringDecoder } from "node:string_decoder"
import { createGunzip } from "node:zlib"

/** The archive's plumbing, free of the database: table order, and gzip'd lines written and read. */

/** Kahn's algorithm: parents before children, ties by name; tables in a cycle go last, by name. */
export const foreignKeyOrder = (
  tables: ReadonlyArray<string>,
  edges: ReadonlyArray<{ readonly child: string; readonly parent: string }>
): ReadonlyArray<string> => {
  const names = new Set(tables)
  const parents = new Map<string, Set<string>>(tables.map((t) => [t, new Set<string>()]))
  for (const { child, parent } of edges) {
    if (child !== parent && names.has(child) && names.has(parent)) parents.get(child)?.add(parent)
  }
  const order: Array<string> = []
  const placed = new Set<string>()
  for (;;) {
    const ready = [...names].filter((t) => !placed.has(t) && [...(parents.get(t) ?? [])].every((p) => placed.has(p))).sort()
    if (ready.length === 0) break
    for (const t of ready) {
      order.push(t)
      placed.add(t)
    }
  }
  return [...order, ...[...names].filter((t) => !placed.has(t)).sort()]
}

/**
 * A gzip'd text read chunk by chunk: each `push` gives the complete lines decompressed so far, `end` the rest, so
 * memory holds a chunk and a line at most. A corrupt stream fails the step that meets it.
 */
export class GunzipLines {
  private readonly gunzip = createGunzip()
  private readonly decoder = new StringDecoder("utf8")
  private readonly failed: Promise<never>
  private readonly ended: Promise<void>
  /** The pieces of the line under way: joined once it ends (a line of MiB is not copied again at each piece). */
  private rest: Array<string> = []
  private lines: Array<string> = []
  constructor() {
    this.gunzip.on("data", (chunk: Buffer) => {
      const text = this.decoder.write(chunk)
      let start = 0
      for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n", start)) {
        this.rest.push(text.slice(start, end))
        this.lines.push(this.rest.join(""))
        this.rest = []
        start = end + 1
      }
      if (start < text.length) this.rest.push(text.slice(start))
    })
    this.failed = new Promise<never>((_, reject) => this.gunzip.once("error", reject))
    this.failed.catch(() => undefined)
    this.ended = new Promise<void>((resolve) => this.gunzip.once("end", resolve))
  }
  private take(): Array<string> {
    const lines = this.lines
    this.lines = []
    return lines
  }
  async push(chunk: Uint8Array): Promise<Array<string>> {
    const written = new Promise<void>((resolve, reject) => this.gunzip.write(chunk, (e) => (e ? reject(e) : resolve())))
    await Promise.race([written, this.failed])
    return this.take()
  }
  async end(): Promise<Array<string>> {
    this.gunzip.end()
    await Promise.race([this.ended, this.failed])
    const last = [...this.rest, this.decoder.end()].join("")
    if (last !== "") this.lines.push(last)
    this.rest = []
    return this.take()
  }
}
