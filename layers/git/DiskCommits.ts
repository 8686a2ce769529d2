import { Effect, Option } from "effect"
import { writeFile, rename } from "node:fs/promises"
import { join } from "node:path"
import { type Change, GitError, type GitRemote, type Head, PushRejected } from "../../src/sync/Git.js"
import { buildCommits } from "./CommitBuilder.js"
import { deepen, type FetchRequest } from "./Fetch.js"
import { describeFailure } from "./GitFailure.js"
import { buildIdx } from "./PackIdx.js"
import type { ObjectReader } from "./PackReader.js"
import { writePack } from "./PackWriter.js"
import { receivePackAdvertisement, sendPack } from "./ReceivePack.js"
import type { ExchangeMeter } from "../../src/sync/Git.js"
import { authHeaders, retryingTransient, type Transport, TransportError } from "./Transport.js"

/**
 * The on-disk layer's commits and pushes, native: commits built by
 * CommitBuilder.ts, stored in the lab's store as one pack, and pushed as that
 * same pack over git's receive-pack (ReceivePack.ts). isomorphic-git walked
 * every tree of the repository for each push; this costs what changed.
 */

export interface DiskCommitsOptions {
  readonly transport: Transport
  readonly timeoutMillis: number
  readonly gitdirOf: (labId: string) => string
  readonly objectsOf: (labId: string) => ObjectReader
  /** What a deepening fetch needs besides the remote (FetchRequest without url, branch and token). */
  readonly fetchSettings: (labId: string) => Omit<FetchRequest, "url" | "branch" | "token">
}

/** Commits of a lab's last build that are not pushed yet: what the next push of that tip sends. */
interface Built {
  readonly parent: string | undefined
  readonly tip: string
  readonly pack: Buffer
}

/** How far back a lost push's commit is looked for in the remote's history. */
const SEARCH_DEPTHS = [32, 256, 1_000]

/** A lab store's commits and pushes (see the module's header), with the packs built and not pushed yet. */
export class DiskCommits {
  constructor(
    private readonly options: DiskCommitsOptions
  ) {}

  private readonly built = new Map<string, Built>()
  private readonly targetOf = (remote: GitRemote, signal: AbortSignal, meter: ExchangeMeter) => ({
    transport: this.options.transport,
    url: remote.url,
    branch: remote.branch,
    headers: authHeaders(Option.getOrUndefined(remote.token)),
    signal: AbortSignal.any([signal, AbortSignal.timeout(this.options.timeoutMillis)]),
    meter
  })
  private readonly failed = (what: string, remote: GitRemote) => (cause: unknown) =>
    new GitError({ message: `${what} ${remote.url} ${remote.branch}: ${describeFailure(cause)}` })

  private readonly readTree = (labId: string) => (oid: string) => {
    const objects = this.options.objectsOf(labId)
    const object = objects.read(oid)
    return object?.type === "tree" ? { content: object.content, depth: objects.deltaDepth(oid) } : undefined
  }

  /** Store a pack of the objects made in the lab's store, so later diffs, reads and fetches find them. */
  private readonly store = async (labId: string, pack: ReturnType<typeof writePack>) => {
    const base = join(this.options.gitdirOf(labId), "objects", "pack", `pack-${pack.checksum.toString("hex")}`)
    await writeFile(`${base}.pack.tmp`, pack.pack, { mode: 0o600 })
    await rename(`${base}.pack.tmp`, `${base}.pack`)
    // the .idx last: a reader sees a pack only once both files are whole
    await writeFile(`${base}.idx.tmp`, buildIdx(pack.entries, pack.checksum), { mode: 0o600 })
    await rename(`${base}.idx.tmp`, `${base}.idx`)
  }

  readonly commitAll = (labId: string, parent: Option.Option<Head>, changes: ReadonlyArray<Change>) =>
    Effect.tryPromise({
      try: async () => {
        const time = Math.floor(Date.now() / 1000)
        const result = buildCommits(
          this.readTree(labId),
          Option.getOrUndefined(parent),
          changes.map((c) => ({
            path: c.path,
            content: c.content === null ? null : Buffer.from(c.content, "utf8"),
            message: c.info.message,
            authorName: c.info.authorName,
            authorEmail: c.info.authorEmail,
            committerName: c.info.committerName,
            committerEmail: c.info.committerEmail,
            time
          })),
          (oid) => this.options.objectsOf(labId).holds(oid)
        )
        const tip = result.heads.at(-1)
        if (result.objects.length > 0 && tip !== undefined) {
          const pack = writePack(result.objects)
          await this.store(labId, pack)
          this.built.set(labId, { parent: Option.getOrUndefined(parent)?.commit, tip: tip.commit, pack: pack.pack })
        }
        return result.heads.map(Option.fromNullable)
      },
      catch: (cause) => new GitError({ message: `git commit: ${describeFailure(cause)}` })
    })

  /** `meter`: the job's (src/sync/SlotLease.ts); the push is aborted when its fiber is interrupted. */
  readonly push = (labId: string, remote: GitRemote, commit: string, expected: Option.Option<string>, meter: ExchangeMeter) =>
    Effect.gen(this, function* () {
      const ready = this.built.get(labId)
      const from = Option.getOrUndefined(expected)
      if (ready === undefined || ready.tip !== commit || ready.parent !== from) {
        return yield* new GitError({ message: `push ${remote.url}: the commit ${commit} was not built by this process` })
      }
      const outcome = yield* Effect.tryPromise({
        try: async (signal) => {
          const target = this.targetOf(remote, signal, meter)
          const advertised = await retryingTransient(target.signal, () => receivePackAdvertisement(target))
          // the branch moved since it was fetched: nothing is sent
          if (advertised.tip !== from) return { _tag: "Refused", stale: true } as const
          // the pack is thin (its first trees are deltas on the parent's), as git pushes unless told otherwise
          if (!advertised.capabilities.has("report-status") || advertised.capabilities.has("no-thin")) {
            throw new TransportError("the git host does not take pushes as this service sends them (report-status, thin packs)")
          }
          return sendPack(target, { from, to: commit }, ready.pack)
        },
        catch: this.failed("push", remote)
      })
      if (outcome._tag === "Refused") {
        return yield* outcome.stale
          ? new PushRejected({ message: `push to ${remote.url} ${remote.branch} rejected: the remote branch moved` })
          : new GitError({ message: `push ${remote.url} ${remote.branch}: the git host refused the update` })
      }
      this.built.delete(labId)
    })

  /** Walk the first parents and merges from `tip` in the store; a commit missing from it ends the walk there. */
  private readonly seen = (labId: string, tip: string, commit: string, limit: number): "found" | "not found" | "more needed" => {
    const objects = this.options.objectsOf(labId)
    const queue = [tip]
    const visited = new Set<string>()
    while (queue.length > 0 && visited.size < limit) {
      const oid = queue.shift() ?? ""
      if (visited.has(oid)) continue
      visited.add(oid)
      if (oid === commit) return "found"
      const object = objects.read(oid)
      if (object?.type !== "commit") return "more needed"
      const header = object.content.toString("latin1", 0, object.content.indexOf("\n\n"))
      for (const match of header.matchAll(/^parent ([0-9a-f]{40})$/gm)) if (match[1]) queue.push(match[1])
    }
    return queue.length === 0 ? "not found" : "more needed"
  }

  readonly reaches = (labId: string, remote: GitRemote, tip: string, commit: string, meter: ExchangeMeter) =>
    Effect.gen(this, function* () {
      for (const depth of SEARCH_DEPTHS) {
        const found = this.seen(labId, tip, commit, depth)
        if (found !== "more needed") return found === "found"
        yield* Effect.tryPromise({
          try: (signal) =>
            deepen(
              { ...this.options.fetchSettings(labId), url: remote.url, branch: remote.branch, token: Option.getOrUndefined(remote.token), signal, meter },
              tip,
              depth
            ),
          catch: this.failed("fetch", remote)
        })
      }
      return this.seen(labId, tip, commit, SEARCH_DEPTHS.at(-1) ?? 1_000) === "found"
    })

  readonly forget = (labId: string) => this.built.delete(labId)
}

export const makeDiskCommits = (options: DiskCommitsOptions) => new DiskCommits(options)
