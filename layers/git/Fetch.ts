import { mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { MAX_FILE_BYTES } from "../../src/sync/Rules.js"
import { type ExternalBase, indexPack } from "./PackIndexer.js"
import { MissingBase } from "./PackFormat.js"
import type { GitObject } from "./PackFormat.js"
import type { ObjectReader } from "./PackReader.js"
import { makePackSink } from "./PackSink.js"
import { bufferAccess, makeScratch } from "./RandomAccess.js"
import { authHeaders, retryingTransient, type Transport } from "./Transport.js"
import type { ExchangeMeter } from "../../src/sync/Git.js"
import { type Advertisement, advertisement as readRefs, fetchPack, type UploadPackTarget } from "./UploadPack.js"

/**
 * A lab's fetch: the branch tip at depth 1 into its store, as git stores it
 * (objects/pack, `shallow`, refs/remotes/origin/<branch>). The first fetch
 * takes the whole tip; later ones offer the last tip and get a thin pack of
 * what changed. The pack is indexed natively (PackIndexer.ts) under the ceilings.
 */

/** Ceilings of one fetch (README: "Git sync"), each checked before memory or CPU is spent on what is over it. */
export interface Ceilings {
  readonly maxPackBytes: number
  readonly maxObjects: number
  readonly maxInflatedBytes: number
}

export const DEFAULT_CEILINGS: Ceilings = {
  maxPackBytes: 4 * 1024 ** 3,
  maxObjects: 1_000_000,
  maxInflatedBytes: 16 * 1024 ** 3
}

/** Small objects a fetch hands on to the first sync's reads, at most this many bytes. */
const KEEP_BYTES = 128 * 1024 * 1024

export interface FetchRequest {
  readonly transport: Transport
  readonly gitdir: string
  readonly url: string
  readonly branch: string
  readonly token: string | undefined
  readonly timeoutMillis: number
  readonly ceilings: Ceilings
  /** The lab's store, for the bases of a thin pack. */
  readonly store: ObjectReader
  /** Ends the exchanges early (the job was interrupted: a stop, or its slot's lease ended). */
  readonly signal?: AbortSignal | undefined
  /** The job's meter (src/sync/SlotLease.ts). */
  readonly meter?: ExchangeMeter | undefined
}

export interface Fetched {
  readonly tip: string
  /** Objects of the fetch already in memory, by id: the first reads need not inflate them again. */
  readonly objects: ReadonlyMap<string, GitObject>
}

const remoteRefPath = (gitdir: string, branch: string) => join(gitdir, "refs", "remotes", "origin", ...branch.split("/"))

/** The tip fetched last time, if any. */
export const localTip = (gitdir: string, branch: string): Promise<string | undefined> =>
  readFile(remoteRefPath(gitdir, branch), "utf8").then((s) => s.trim(), () => undefined)

type Remote = Pick<FetchRequest, "transport" | "url" | "branch" | "token" | "timeoutMillis" | "signal" | "meter">

const targetOf = (request: Remote): UploadPackTarget => ({
  transport: request.transport,
  url: request.url,
  branch: request.branch,
  headers: authHeaders(request.token),
  meter: request.meter,
  signal: request.signal ? AbortSignal.any([request.signal, AbortSignal.timeout(request.timeoutMillis)]) : AbortSignal.timeout(request.timeoutMillis)
})

/** The branch's tip from the ref advertisement alone (one GET); undefined when there is no such branch. */
export const remoteTip = async (request: Remote) =>
  (await advertised(targetOf(request))).tip

/** The ref advertisement, asked again after a transient failure. */
const advertised = (target: UploadPackTarget) => retryingTransient(target.signal, () => readRefs(target))

const writeAtomically = async (path: string, data: string | Buffer) => {
  await mkdir(dirname(path), { recursive: true })
  await writeFile(`${path}.tmp`, data, { mode: 0o600 })
  await rename(`${path}.tmp`, path)
}

const shallowPathOf = (gitdir: string) => join(gitdir, "shallow")
const readShallow = async (gitdir: string) =>
  (await readFile(shallowPathOf(gitdir), "utf8").catch(() => "")).split("\n").filter((l) => /^[0-9a-f]{40}$/.test(l))

/**
 * Ask for `tip` with `depth` commits of history, offering `have` (a thin pack may build on it), and store the
 * pack, its index and the new shallow commits. Answers the objects the pack held in memory.
 */
const fetchAndStore = async (
  request: FetchRequest,
  target: UploadPackTarget,
  advertisement: Advertisement,
  want: { readonly tip: string; readonly have: string | undefined; readonly depth: number }
) => {
  const packDir = join(request.gitdir, "objects", "pack")
  await mkdir(packDir, { recursive: true })
  const shallow = want.have === undefined ? [] : await readShallow(request.gitdir)
  const sink = makePackSink(packDir, request.ceilings)
  const scratch = makeScratch(request.gitdir)
  try {
    const update = await fetchPack(target, advertisement, { tip: want.tip, have: want.have, shallow, depth: want.depth }, sink)
    const indexed = await indexPack(
      sink.finish(),
      { maxObjects: request.ceilings.maxObjects, maxInflatedBytes: request.ceilings.maxInflatedBytes, keepBytes: KEEP_BYTES },
      { scratchDir: request.gitdir, external: want.have === undefined ? undefined : (oid) => externalBase(request.store, scratch, oid) }
    )
    if (!indexed.contains(want.tip) && want.depth === 1) throw new MissingBase("the pack lacks the commit it was asked for")
    const name = join(packDir, `pack-${indexed.checksum}`)
    // the .idx last: a reader sees a pack only once both files are whole
    await sink.persist(`${name}.pack`)
    await writeAtomically(`${name}.idx`, indexed.idx)
    const shallows = new Set([...shallow, ...update.shallow])
    for (const oid of update.unshallow) shallows.delete(oid)
    await writeAtomically(shallowPathOf(request.gitdir), [...shallows].map((oid) => `${oid}\n`).join(""))
    return indexed.objects
  } catch (cause) {
    await sink.discard()
    throw cause
  } finally {
    scratch.dispose()
  }
}

/** Fetch the branch tip into the store; undefined when the branch does not exist. */
export const fetchInto = async (request: FetchRequest): Promise<Fetched | undefined> => {
  const target = targetOf(request)
  const advertisement = await advertised(target)
  const tip = advertisement.tip
  if (tip === undefined) return undefined
  const have = await localTip(request.gitdir, request.branch)
  if (have === tip) return { tip, objects: new Map() }
  const attempt = async (base: string | undefined): Promise<Fetched> => {
    // a pack cut by a 5xx or a reset is asked for again whole, into a new sink
    const objects = await retryingTransient(target.signal, () => fetchAndStore(request, target, advertisement, { tip, have: base, depth: 1 }))
    await writeAtomically(remoteRefPath(request.gitdir, request.branch), `${tip}\n`)
    return { tip, objects }
  }
  try {
    return await attempt(have)
  } catch (cause) {
    // a thin pack built on something the store lacks: fetch the whole tip instead
    if (cause instanceof MissingBase && have !== undefined) return attempt(undefined)
    throw cause
  }
}

/** Bring `depth` commits of the history of `tip` (the tip fetched last) into the store. */
export const deepen = async (request: FetchRequest, tip: string, depth: number): Promise<void> => {
  const target = targetOf(request)
  const advertisement = await advertised(target)
  await retryingTransient(target.signal, () => fetchAndStore(request, target, advertisement, { tip, have: tip, depth }))
}

/** An object of the lab's store as a thin pack's delta base: small ones in memory, large ones spilled. */
const externalBase = (store: ObjectReader, scratch: ReturnType<typeof makeScratch>, oid: string): ExternalBase | undefined => {
  const info = store.readBounded(oid, MAX_FILE_BYTES)
  if (info === undefined) return undefined
  const content = info.content
  return {
    type: info.type,
    size: info.size,
    access: async () => {
      if (content !== undefined) return bufferAccess(content)
      // trees are held whole (the indexer caps them); only large blobs are read from a scratch file
      const whole = info.type === "blob" ? undefined : store.read(oid)
      if (whole !== undefined) return bufferAccess(whole.content)
      const spilled = await store.spill(oid, scratch)
      if (spilled === undefined) throw new MissingBase("a delta's base is neither in the pack nor in the store")
      return spilled
    }
  }
}
