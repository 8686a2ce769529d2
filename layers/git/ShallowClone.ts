import { mkdir, rename, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { indexPack } from "./PackIndexer.js"
import type { GitObject } from "./PackReader.js"

/**
 * A lab's first fetch: the branch tip at depth 1 over git's smart HTTP
 * (protocol v0, stateless), the pack indexed natively (PackIndexer.ts) and
 * stored as git stores it (objects/pack, `shallow`, refs/remotes/origin/<branch>),
 * so later fetches by isomorphic-git build on it. Anything beyond this common
 * case throws Unsupported and the caller lets isomorphic-git do the fetch.
 */

/** The server or the answer needs more than this client speaks. */
export class Unsupported extends Error {}

export interface TipRequest {
  readonly url: string
  readonly branch: string
  readonly headers: Record<string, string>
  readonly timeoutMillis: number
}

export interface CloneRequest extends TipRequest {
  readonly gitdir: string
}

const pkt = (line: string): Buffer => {
  const bytes = Buffer.from(line, "utf8")
  return Buffer.concat([Buffer.from((bytes.length + 4).toString(16).padStart(4, "0"), "latin1"), bytes])
}
const FLUSH = Buffer.from("0000", "latin1")

/** pkt-lines of `data` from `start`: each line's payload, null for a flush; `rest` is where an incomplete line begins. */
const splitLines = (data: Buffer, start: number): { readonly lines: Array<Buffer | null>; readonly rest: number } => {
  const lines: Array<Buffer | null> = []
  let pos = start
  while (pos + 4 <= data.length) {
    const length = Number.parseInt(data.toString("latin1", pos, pos + 4), 16)
    if (!Number.isInteger(length) || (length > 0 && length < 4)) throw new Unsupported(`bad pkt-line length at ${pos}`)
    if (length === 0) {
      lines.push(null)
      pos += 4
      continue
    }
    if (pos + length > data.length) break
    lines.push(data.subarray(pos + 4, pos + length))
    pos += length
  }
  return { lines, rest: pos }
}

const request = async (url: string, init: RequestInit, what: string): Promise<Response> => {
  const response = await fetch(url, { ...init, redirect: "follow" })
  if (response.status !== 200) {
    await response.body?.cancel()
    throw new Error(`HTTP Error: ${response.status} ${response.statusText} (${what})`)
  }
  return response
}

/** The branch tip and the server's capabilities, from the ref advertisement; undefined tip when there is no such branch. */
const advertisement = async (req: TipRequest, signal: AbortSignal) => {
  const response = await request(`${req.url}/info/refs?service=git-upload-pack`, { headers: req.headers, signal }, "refs")
  if (response.headers.get("content-type") !== "application/x-git-upload-pack-advertisement") throw new Unsupported("dumb HTTP")
  const { lines } = splitLines(Buffer.from(await response.arrayBuffer()), 0)
  const refs = lines.filter((line): line is Buffer => line !== null && !line.toString("latin1").startsWith("# service="))
  const first = refs[0]
  if (first === undefined) return { tip: undefined, capabilities: new Set<string>() }
  const nul = first.indexOf(0)
  const capabilities = new Set(nul === -1 ? [] : first.toString("latin1", nul + 1).trim().split(" "))
  const wanted = `refs/heads/${req.branch}`
  for (const line of refs) {
    const text = line.toString("utf8")
    const [head] = text.split("\0")
    const match = /^([0-9a-f]{40}) (\S+)\n?$/.exec(head ?? "")
    if (match?.[2] === wanted) return { tip: match[1], capabilities }
  }
  return { tip: undefined, capabilities }
}

/** POST the depth-1 request for `tip`; the pack the side band carries. */
const fetchPack = async (req: CloneRequest, tip: string, signal: AbortSignal): Promise<Buffer> => {
  const body = Buffer.concat([pkt(`want ${tip} side-band-64k ofs-delta shallow no-progress agent=lab-service\n`), pkt("deepen 1\n"), FLUSH, pkt("done\n")])
  const response = await request(
    `${req.url}/git-upload-pack`,
    {
      method: "POST",
      headers: { ...req.headers, "content-type": "application/x-git-upload-pack-request", accept: "application/x-git-upload-pack-result" },
      body,
      signal
    },
    "upload-pack"
  )
  if (!response.body) throw new Unsupported("upload-pack answered without a body")
  const pack: Array<Buffer> = []
  let pending: Buffer = Buffer.alloc(0)
  // shallow lines and a flush, then NAK, then the pack on band 1 (2: progress, 3: a fatal error)
  let phase: "shallow" | "ack" | "pack" | "done" = "shallow"
  for await (const chunk of response.body) {
    pending = pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([pending, chunk])
    const { lines, rest } = splitLines(pending, 0)
    pending = pending.subarray(rest)
    for (const line of lines) {
      if (phase === "shallow") {
        if (line === null) phase = "ack"
        else if (!/^(shallow|unshallow) [0-9a-f]{40}\n?$/.test(line.toString("latin1"))) throw new Unsupported("no shallow section")
      } else if (phase === "ack") {
        if (line === null || !line.toString("latin1").startsWith("NAK")) throw new Unsupported("expected NAK")
        phase = "pack"
      } else if (phase === "pack") {
        if (line === null) {
          phase = "done"
          continue
        }
        const band = line[0]
        if (band === 1) pack.push(line.subarray(1))
        else if (band === 3) throw new Error(`git host: ${line.toString("utf8", 1).trim()}`)
      }
    }
  }
  if (phase !== "done") throw new Error("upload-pack: the answer ended early")
  return Buffer.concat(pack)
}

/** The branch's tip from the ref advertisement alone (one GET); undefined when there is no such branch. */
export const remoteTip = async (req: TipRequest): Promise<string | undefined> =>
  (await advertisement(req, AbortSignal.timeout(req.timeoutMillis))).tip

export interface Cloned {
  readonly tip: string
  /** The objects fetched, by id (IndexedPack.objects). */
  readonly objects: ReadonlyMap<string, GitObject>
}

/** Clone the branch tip at depth 1 into `gitdir`; undefined when the branch does not exist. */
export const shallowClone = async (req: CloneRequest): Promise<Cloned | undefined> => {
  const signal = AbortSignal.timeout(req.timeoutMillis)
  const { tip, capabilities } = await advertisement(req, signal)
  if (tip === undefined) return undefined
  for (const needed of ["shallow", "side-band-64k", "ofs-delta"]) {
    if (!capabilities.has(needed)) throw new Unsupported(`the server does not offer ${needed}`)
  }
  const pack = await fetchPack(req, tip, signal)
  const indexed = indexPack(pack)
  if (!indexed.objects.has(tip)) throw new Error(`upload-pack: the pack lacks the commit ${tip}`)
  const base = join(req.gitdir, "objects", "pack", `pack-${indexed.checksum}`)
  await mkdir(dirname(base), { recursive: true })
  // the .idx last: a reader sees a pack only once both files are whole
  await writeFile(`${base}.pack.tmp`, pack)
  await rename(`${base}.pack.tmp`, `${base}.pack`)
  await writeFile(`${base}.idx.tmp`, indexed.idx)
  await rename(`${base}.idx.tmp`, `${base}.idx`)
  await writeFile(join(req.gitdir, "shallow"), `${tip}\n`)
  const ref = join(req.gitdir, "refs", "remotes", "origin", ...req.branch.split("/"))
  await mkdir(dirname(ref), { recursive: true })
  await writeFile(ref, `${tip}\n`)
  return { tip, objects: indexed.objects }
}
