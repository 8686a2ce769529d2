import { StringDecoder } from "node:string_decoder"
import { createGunzip, createGzip } from "node:zlib"

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

/** A gzip stream collected in memory, written with backpressure, hashed at the end. */
export class GzipSink {
  private readonly gzip = createGzip({ level: 6 })
  private readonly chunks: Array<Buffer> = []
  constructor() {
    this.gzip.on("data", (chunk: Buffer) => this.chunks.push(chunk))
  }
  write(text: string): Promise<void> {
    return new Promise((resolve, reject) => this.gzip.write(text, (error) => (error ? reject(error) : resolve())))
  }
  end(): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.gzip.once("end", () => resolve(Buffer.concat(this.chunks)))
      this.gzip.once("error", reject)
      this.gzip.end()
    })
  }
}

/** Lines of a gzip'd text, as the decompressor produces them. */
export async function* gunzipLines(archive: Uint8Array): AsyncGenerator<string> {
  const gunzip = createGunzip()
  gunzip.end(Buffer.from(archive))
  const decoder = new StringDecoder("utf8")
  let rest = ""
  for await (const chunk of gunzip) {
    if (!(chunk instanceof Buffer)) continue
    rest += decoder.write(chunk)
    let start = 0
    for (let end = rest.indexOf("\n"); end >= 0; end = rest.indexOf("\n", start)) {
      yield rest.slice(start, end)
      start = end + 1
    }
    rest = rest.slice(start)
  }
  rest += decoder.end()
  if (rest !== "") yield rest
}

