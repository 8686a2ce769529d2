import { CeilingExceeded } from "./PackFormat.js"
import type { PackSink } from "./PackSink.js"
import type { ExchangeMeter } from "../../src/sync/Git.js"
import { readAll, statusFailure, type Transport, TransportError } from "./Transport.js"

/**
 * git's smart HTTP fetch (protocol v0, stateless): the ref advertisement, then
 * one upload-pack request for the branch tip at depth 1, with the tip fetched
 * last time offered as `have` (the server then sends a thin pack of what
 * changed). The pack's bytes stream into a PackSink as they arrive.
 */

/** System errors of the local file system: a pack sink's write failing so is the store's failure, never the host's. */
const LOCAL_STORE_CODES: ReadonlySet<unknown> = new Set(["ENOSPC", "EIO", "EDQUOT", "EROFS"])

export const isLocalStoreFailure = (cause: unknown): boolean =>
  cause instanceof Error && "code" in cause && LOCAL_STORE_CODES.has(cause.code)

/** A ref advertisement lists every ref; a huge one is refused rather than held. */
const MAX_ADVERTISEMENT_BYTES = 32 * 1024 * 1024
/** Answers before the pack (shallow lines, ACK/NAK) are short. */
const MAX_PREAMBLE_LINE = 1024

export interface UploadPackTarget {
  readonly transport: Transport
  readonly url: string
  readonly branch: string
  readonly headers: Record<string, string>
  readonly signal: AbortSignal
  /** The job's meter (SlotLease.ts), told of each exchange. */
  readonly meter?: ExchangeMeter | undefined
}

export interface Advertisement {
  readonly tip: string | undefined
  readonly capabilities: ReadonlySet<string>
  /** The repository URL the advertisement came from (after same-origin redirects). */
  readonly base: string
}

/** One pkt-line carrying `line`. */
export const pkt = (line: string): Buffer => {
  const bytes = Buffer.from(line, "utf8")
  return Buffer.concat([Buffer.from((bytes.length + 4).toString(16).padStart(4, "0"), "latin1"), bytes])
}
const FLUSH = Buffer.from("0000", "latin1")

/** pkt-lines of `data` from `start`: each line's payload, null for a flush; `rest` is where an incomplete line begins. */
const splitLines = (data: Buffer, start: number): { readonly lines: Array<Buffer | null>; readonly rest: number } => {
  const lines: Array<Buffer | null> = []
  let pos = start
  while (pos + 4 <= data.length) {
    const text = data.toString("latin1", pos, pos + 4)
    const length = /^[0-9a-f]{4}$/.test(text) ? Number.parseInt(text, 16) : Number.NaN
    if (!Number.isInteger(length) || (length > 0 && length < 4)) throw new TransportError("the git host's answer is not git's smart HTTP protocol")
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

/** git's two smart HTTP services: fetch (upload-pack) and push (receive-pack). */
type GitService = "git-upload-pack" | "git-receive-pack"

/**
 * GET the ref advertisement of `service` (fetch: upload-pack, push: receive-pack), refused unless it is git's smart
 * HTTP protocol: the URL it came from (after same-origin redirects) and its bytes.
 */
export const readAdvertisement = async (target: UploadPackTarget, service: GitService) => {
  const response = await target.transport.request(`${target.url}/info/refs?service=${service}`, {
    method: "GET",
    headers: target.headers,
    signal: target.signal,
    meter: target.meter
  })
  if (response.status !== 200) {
    response.discard()
    throw statusFailure(response.status)
  }
  if (response.headers["content-type"] !== `application/x-${service}-advertisement`) {
    response.discard()
    throw new TransportError("the git host does not speak git's smart HTTP protocol")
  }
  return { url: response.url, body: await readAll(response.body, MAX_ADVERTISEMENT_BYTES, "ref advertisement") }
}

/** POST `body` to `service` of the repository at `base`: the answer, refused unless its status is 200. */
export const postToService = async (target: UploadPackTarget, base: string, service: GitService, body: Buffer) => {
  const response = await target.transport.request(`${base}/${service}`, {
    method: "POST",
    headers: { ...target.headers, "content-type": `application/x-${service}-request`, accept: `application/x-${service}-result` },
    body,
    signal: target.signal,
    meter: target.meter
  })
  if (response.status !== 200) {
    response.discard()
    throw statusFailure(response.status)
  }
  return response
}

/** The branch tip and the server's capabilities; undefined tip when there is no such branch. */
export const advertisement = async (target: UploadPackTarget): Promise<Advertisement> => {
  const { url, body } = await readAdvertisement(target, "git-upload-pack")
  const base = url.toString().replace(/\/info\/refs\?service=git-upload-pack$/, "")
  const { lines } = splitLines(body, 0)
  const refs = lines.filter((line): line is Buffer => line !== null && !line.toString("latin1").startsWith("# service="))
  const first = refs[0]
  if (first === undefined) return { tip: undefined, capabilities: new Set(), base }
  const nul = first.indexOf(0)
  const capabilities = new Set(nul === -1 ? [] : first.toString("latin1", nul + 1).trim().split(" "))
  const wanted = `refs/heads/${target.branch}`
  for (const line of refs) {
    const [head] = line.toString("utf8").split("\0")
    const match = /^([0-9a-f]{40}) (\S+)\n?$/.exec(head ?? "")
    if (match?.[2] === wanted) return { tip: match[1], capabilities, base }
  }
  return { tip: undefined, capabilities, base }
}

export interface PackRequest {
  readonly tip: string
  /** The tip fetched last time, which the local store holds (a thin pack may build on it). */
  readonly have: string | undefined
  /** The store's shallow commits, so the server does not assume their parents are here. */
  readonly shallow: ReadonlyArray<string>
  /** How many commits of history from `tip` (1: the tip alone). */
  readonly depth: number
}

export interface ShallowUpdate {
  readonly shallow: ReadonlyArray<string>
  readonly unshallow: ReadonlyArray<string>
}

/** POST the depth-1 request for `tip`; the pack goes to `sink` as it arrives. */
export const fetchPack = async (
  target: UploadPackTarget,
  advertised: Advertisement,
  request: PackRequest,
  sink: PackSink
): Promise<ShallowUpdate> => {
  for (const needed of ["shallow", "side-band-64k", "ofs-delta"]) {
    if (!advertised.capabilities.has(needed)) throw new TransportError(`the git host does not offer ${needed}, which a shallow fetch needs`)
  }
  const thin = request.have !== undefined && advertised.capabilities.has("thin-pack")
  const capabilities = `side-band-64k ofs-delta shallow no-progress${thin ? " thin-pack" : ""} agent=lab-service`
  const body = Buffer.concat([
    pkt(`want ${request.tip} ${capabilities}\n`),
    ...request.shallow.map((oid) => pkt(`shallow ${oid}\n`)),
    pkt(`deepen ${request.depth}\n`),
    FLUSH,
    ...(request.have !== undefined ? [pkt(`have ${request.have}\n`)] : []),
    pkt("done\n")
  ])
  const response = await postToService(target, advertised.base, "git-upload-pack", body)
  const update = { shallow: new Array<string>(), unshallow: new Array<string>() }
  let pending: Buffer = Buffer.alloc(0)
  // shallow lines and a flush, then ACK or NAK, then the pack on band 1 (2: progress, 3: a fatal error)
  let phase: "shallow" | "ack" | "pack" | "done" = "shallow"
  try {
    for await (const chunk of response.body) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      const { lines, rest } = splitLines(pending, 0)
      pending = pending.subarray(rest)
      for (const line of lines) {
        // git's fatal answer ("ERR upload-pack: not our ref …"): its words are the host's, so only the fact is said
        if (line !== null && line.toString("latin1", 0, 4) === "ERR ") {
          throw new TransportError("the git host refused to send the commit it advertised (the branch may have moved meanwhile)")
        }
        if (phase === "shallow") {
          const match = line === null ? null : /^(shallow|unshallow) ([0-9a-f]{40})\n?$/.exec(line.toString("latin1"))
          if (line === null) phase = "ack"
          else if (match?.[1] === "shallow" && match[2]) update.shallow.push(match[2])
          else if (match?.[1] === "unshallow" && match[2]) update.unshallow.push(match[2])
          else throw new TransportError("the git host's answer has no shallow section")
        } else if (phase === "ack") {
          if (line === null || !/^(NAK|ACK [0-9a-f]{40})/.test(line.toString("latin1"))) {
            throw new TransportError("the git host's answer is not git's smart HTTP protocol")
          }
          phase = "pack"
        } else if (phase === "pack") {
          if (line === null) {
            phase = "done"
            continue
          }
          const band = line[0]
          if (band === 1) sink.write(line.subarray(1))
          else if (band === 3) throw new TransportError("the git host reported an error while sending the pack")
        }
      }
      // before the pack, lines are short: a long one is not git's protocol
      if (phase !== "pack" && phase !== "done" && pending.length > MAX_PREAMBLE_LINE) {
        throw new TransportError("the git host's answer is not git's smart HTTP protocol")
      }
    }
  } catch (cause) {
    // a ceiling or a protocol failure says itself; a broken or timed-out stream is described, not quoted
    if (cause instanceof TransportError || cause instanceof CeilingExceeded) throw cause
    // the pack sink's own file system failing (a full disk, say) is the store's failure, not the host's: not retried
    if (isLocalStoreFailure(cause)) throw cause
    throw new TransportError(target.signal.aborted ? "the git host did not answer in time" : "the connection to the git host failed", !target.signal.aborted)
  }
  if (phase !== "done") throw new TransportError("the git host's answer ended early", true)
  return update
}
