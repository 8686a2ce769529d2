import { readAll, TransportError } from "./Transport.js"
import { pkt, postToService, readAdvertisement, type UploadPackTarget } from "./UploadPack.js"

/**
 * git's smart HTTP push (receive-pack, protocol v0): the ref advertisement, then
 * one request with the ref update and the pack; the answer is git's report
 * (report-status) on the side band. The report's words are the remote's: only
 * the verdict is kept, never its text.
 */

const MAX_ANSWER_BYTES = 4 * 1024 * 1024
const ZERO = "0".repeat(40)

/** The payloads of the pkt-lines in `data` (null for a flush). */
const lines = (data: Buffer): Array<Buffer | null> => {
  const out: Array<Buffer | null> = []
  for (let pos = 0; pos + 4 <= data.length; ) {
    const text = data.toString("latin1", pos, pos + 4)
    const length = /^[0-9a-f]{4}$/.test(text) ? Number.parseInt(text, 16) : Number.NaN
    if (!Number.isInteger(length) || (length > 0 && length < 4) || pos + length > data.length) {
      throw new TransportError("the git host's answer is not git's smart HTTP protocol")
    }
    out.push(length === 0 ? null : data.subarray(pos + 4, pos + length))
    pos += length === 0 ? 4 : length
  }
  return out
}

export interface PushAdvertisement {
  /** The branch's current tip on the host; undefined when it does not exist. */
  readonly tip: string | undefined
  readonly capabilities: ReadonlySet<string>
}

export const receivePackAdvertisement = async (target: UploadPackTarget): Promise<PushAdvertisement> => {
  const { body } = await readAdvertisement(target, "git-receive-pack")
  const refs = lines(body).filter(
    (line): line is Buffer => line !== null && !line.toString("latin1").startsWith("# service=")
  )
  const first = refs[0]
  const nul = first?.indexOf(0) ?? -1
  const capabilities = new Set(first && nul !== -1 ? first.toString("latin1", nul + 1).trim().split(" ") : [])
  const wanted = `refs/heads/${target.branch}`
  for (const line of refs) {
    const match = /^([0-9a-f]{40}) (\S+)/.exec(line.toString("utf8").split("\0")[0] ?? "")
    if (match?.[2] === wanted && match[1] !== ZERO) return { tip: match[1], capabilities }
  }
  return { tip: undefined, capabilities }
}

/** How a push ended: the branch moved to the commit, or the host refused (the branch had moved on: `stale`). */
export type PushOutcome = { readonly _tag: "Pushed" } | { readonly _tag: "Refused"; readonly stale: boolean }

/** Move the branch from `from` (undefined: create it) to `to`, sending `pack` with the objects it needs. */
export const sendPack = async (
  target: UploadPackTarget,
  update: { readonly from: string | undefined; readonly to: string },
  pack: Buffer
): Promise<PushOutcome> => {
  const ref = `refs/heads/${target.branch}`
  const body = Buffer.concat([pkt(`${update.from ?? ZERO} ${update.to} ${ref}\0report-status side-band-64k agent=lab-service\n`), Buffer.from("0000"), pack])
  const response = await postToService(target, target.url, "git-receive-pack", body)
  // the report-status lines ride on band 1 of the side band
  const report: Array<Buffer> = []
  for (const line of lines(await readAll(response.body, MAX_ANSWER_BYTES, "answer"))) {
    if (line === null) continue
    if (line[0] === 1) report.push(line.subarray(1))
    else if (line[0] === 3) throw new TransportError("the git host reported an error while receiving the push")
  }
  const status = lines(Buffer.concat(report)).flatMap((l) => (l === null ? [] : [l.toString("utf8").trimEnd()]))
  if (!status.some((l) => l === "unpack ok")) throw new TransportError("the git host could not store the pushed objects")
  if (status.some((l) => l === `ok ${ref}`)) return { _tag: "Pushed" }
  const refused = status.find((l) => l.startsWith(`ng ${ref} `)) ?? ""
  return { _tag: "Refused", stale: /non-fast-forward|fetch first|failed to update ref|stale info|failed to lock|already exists/i.test(refused) }
}
