import { Duration, Effect, Either, Layer, Option, Schedule } from "effect"
import git from "isomorphic-git"
import fs from "node:fs"
import { access, rm } from "node:fs/promises"
import { join } from "node:path"
import { Git, GitError, type GitRemote, RemoteRefused } from "../../src/sync/Git.js"
import { type AllowedHosts, NO_EXCEPTIONS } from "../../src/sync/HostPolicy.js"
import { type ExchangeMeter, HostMeter } from "../../src/sync/Git.js"
import { type Ceilings, DEFAULT_CEILINGS, fetchInto, remoteTip } from "./Fetch.js"
import { type DiskCommits, makeDiskCommits } from "./DiskCommits.js"
import { describeFailure } from "./GitFailure.js"
import * as Iso from "./IsoOps.js"
import { compactPacks } from "./PackCompaction.js"
import { type ObjectReader, openObjectReader } from "./PackReader.js"
import { withPreloaded } from "./PreloadedReader.js"
import { storeFs } from "./StoreFs.js"
import { isLocalStoreFailure } from "./UploadPack.js"
import { type GuardedTransport, makeTransport, type PhaseLimits, type Resolve, systemResolve, TransportError } from "./Transport.js"

export interface GitDiskOptions {
  /** Directory holding one bare repository per lab. */
  readonly root: string
  /** Deadline of each fetch or push as a whole (GIT_TIMEOUT_MS). */
  readonly timeoutMillis: number
  /** Limits of each phase of an exchange: GIT_CONNECT_TIMEOUT_MS, GIT_RESPONSE_TIMEOUT_MS, GIT_IDLE_TIMEOUT_MS. */
  readonly phases?: PhaseLimits
  /** GIT_ALLOWED_HOSTS: the private hosts git traffic may reach (by default, none: public addresses only). */
  readonly allowedHosts?: AllowedHosts
  /** GIT_MAX_PACK_BYTES, GIT_MAX_OBJECTS, GIT_MAX_INFLATED_BYTES. */
  readonly ceilings?: Ceilings
  /** How names are resolved (a test plays a rebinding name server with it). */
  readonly resolve?: Resolve
}

/** How long a lab's isomorphic-git cache outlives its last job. */
const CACHE_IDLE_MILLIS = 60_000

/** The labs' stores: their readers and isomorphic-git caches, the transport, the native commits. */
class DiskStores {
  // isomorphic-git keeps parsed objects in its cache object: kept between a lab's jobs while they come often,
  // dropped after a quiet minute so idle labs hold no memory. Not effect's Cache: its time-to-live runs from the
  // load, not the last use, and an expired entry stays in memory until its key is asked for again (or capacity
  // pushes it out), the opposite of what this is for; and it is read synchronously, inside isomorphic-git's setup
  private readonly caches = new Map<string, { readonly cache: object; readonly usedAt: number }>()
  private readonly repos = new Map<string, Iso.Repo & { readonly objects: ObjectReader }>()
  /**
   * Labs whose store failed a read (an object missing: a pack the host sent incomplete, a damaged file) or a
   * fetch after the host had answered: their next fetch starts from an empty store, so the lab heals as soon as
   * the host sends whole packs again, instead of trusting the ref a bad fetch left behind.
   */
  private readonly suspect = new Set<string>()
  private readonly ceilings: Ceilings
  readonly commits: DiskCommits

  constructor(
    private readonly options: GitDiskOptions,
    readonly transport: GuardedTransport
  ) {
    this.ceilings = options.ceilings ?? DEFAULT_CEILINGS
    this.commits = makeDiskCommits({
      transport,
      timeoutMillis: options.timeoutMillis,
      gitdirOf: this.gitdirOf,
      objectsOf: (labId) => this.repo(labId).objects,
      fetchSettings: (labId) => ({
        transport,
        gitdir: this.gitdirOf(labId),
        timeoutMillis: options.timeoutMillis,
        ceilings: this.ceilings,
        store: this.repo(labId).objects
      })
    })
  }

  readonly gitdirOf = (labId: string) => join(this.options.root, `${labId}.git`)

  /** Forget the caches of labs quiet for CACHE_IDLE_MILLIS (on every use, and every minute: an idle service too). */
  readonly evictIdle = () => {
    const now = Date.now()
    for (const [id, entry] of this.caches) {
      if (now - entry.usedAt <= CACHE_IDLE_MILLIS) continue
      this.caches.delete(id)
      // the reader closes its packs itself when idle; the repository handle goes with the cache it holds
      this.repos.delete(id)
    }
  }

  private readonly cacheOf = (labId: string): object => {
    const now = Date.now()
    this.evictIdle()
    const cache = this.caches.get(labId)?.cache ?? {}
    this.caches.set(labId, { cache, usedAt: now })
    return cache
  }

  private readonly open = (labId: string, objects: ObjectReader) => {
    const gitdir = this.gitdirOf(labId)
    const repo = { fs: storeFs(gitdir, () => objects), gitdir, cache: this.cacheOf(labId), objects }
    this.repos.set(labId, repo)
    return repo
  }

  readonly repo = (labId: string) => this.repos.get(labId) ?? this.open(labId, openObjectReader(this.gitdirOf(labId)))

  readonly ensure = (labId: string) =>
    Iso.attempt("git init", async () => {
      const gitdir = this.gitdirOf(labId)
      const exists = await access(join(gitdir, "HEAD")).then(() => true, () => false)
      if (!exists) await git.init({ fs, gitdir, bare: true })
    })

  /** Drop the lab's reader and cache (they are opened again when next needed). */
  private readonly drop = (labId: string) => {
    this.repos.get(labId)?.objects.close()
    this.repos.delete(labId)
    this.caches.delete(labId)
  }

  /** Merge the store's small packs (one per fetch and per push) before they slow every lookup. */
  private readonly compact = (labId: string) =>
    Effect.tryPromise(() => compactPacks(this.gitdirOf(labId), () => this.drop(labId))).pipe(
      Effect.catchAll((cause) => Effect.logWarning(`the git store of ${labId} was not compacted`, cause))
    )

  /** `read` of the lab's store; a failure makes the store suspect (see `suspect`). */
  readonly reading = <A>(labId: string, read: Effect.Effect<A, GitError>) =>
    Effect.tapError(read, () => Effect.sync(() => this.suspect.add(labId)))

  /** `meter`: the job's (src/sync/SlotLease.ts); the fetch is aborted when its fiber is interrupted. */
  readonly fetchHead = (labId: string, remote: GitRemote, meter: ExchangeMeter) =>
    Effect.gen(this, function* () {
      if (this.suspect.delete(labId)) {
        yield* Effect.logWarning(`the git store of ${labId} failed before: fetched again from scratch`)
        yield* this.reset(labId)
      }
      yield* this.ensure(labId)
      yield* this.compact(labId)
      const current = this.repo(labId)
      const fetched = yield* Effect.tryPromise({
        try: (signal) =>
          fetchInto({
            signal,
            meter,
            transport: this.transport,
            gitdir: current.gitdir,
            url: remote.url,
            branch: remote.branch,
            token: Option.getOrUndefined(remote.token),
            timeoutMillis: this.options.timeoutMillis,
            ceilings: this.ceilings,
            store: current.objects
          }),
        catch: (cause) => {
          // the host answered and what it sent, or the store, failed: the next fetch starts from scratch
          if (!(cause instanceof TransportError)) this.suspect.add(labId)
          return new GitError({
            message: `fetch ${remote.url} ${remote.branch}: ${describeFailure(cause)}`,
            ...(isLocalStoreFailure(cause) ? { cause } : {})
          })
        }
      })
      if (fetched === undefined) return Option.none()
      if (fetched.objects.size === 0) return Option.some(yield* this.reading(labId, Iso.headOf(current, fetched.tip)))
      // a new pack: a fresh reader, handed the objects the fetch already holds for the first reads
      current.objects.close()
      const fresh = this.open(labId, withPreloaded(openObjectReader(current.gitdir), fetched.objects))
      return Option.some(yield* this.reading(labId, Iso.headOf(fresh, fetched.tip)))
    })

  /** The host answers the ref advertisement now (a GET under the phase limits, retried after a transient failure). */
  readonly probe = (remote: GitRemote) =>
    Effect.tryPromise({
      try: (signal) =>
        remoteTip({
          transport: this.transport,
          url: remote.url,
          branch: remote.branch,
          token: Option.getOrUndefined(remote.token),
          timeoutMillis: this.options.timeoutMillis,
          signal
        }),
      catch: (cause) => new GitError({ message: `fetch ${remote.url} ${remote.branch}: ${describeFailure(cause)}` })
    }).pipe(Effect.asVoid)

  readonly reset = (labId: string) =>
    Effect.promise(async () => {
      this.drop(labId)
      this.commits.forget(labId)
      await rm(this.gitdirOf(labId), { recursive: true, force: true })
    })
}

/**
 * Git on disk: the service's own smart-HTTP fetch (Fetch.ts) through the
 * guarded transport (Transport.ts), objects read by its own reader
 * (PackReader.ts), commits built and pushed natively (DiskCommits.ts);
 * isomorphic-git, for what remains (an unusual tree's diff), sees the packs only
 * through that reader (StoreFs.ts).
 */
const hostOf = (url: string) => {
  try {
    return new URL(url).host
  } catch {
    return ""
  }
}

export const layer = (options: GitDiskOptions) =>
  Layer.scoped(
    Git,
    Effect.gen(function* () {
      const transport = makeTransport({
        allowed: options.allowedHosts ?? NO_EXCEPTIONS,
        resolve: options.resolve ?? systemResolve,
        ...(options.phases ? { phases: options.phases } : {})
      })
      yield* Effect.addFinalizer(() => Effect.sync(transport.close))
      const stores = new DiskStores(options, transport)
      yield* Effect.forkScoped(Effect.repeat(Effect.sync(stores.evictIdle), Schedule.spaced(Duration.millis(CACHE_IDLE_MILLIS))))
      // a span per network call (when traces are exported): the lab and the host, never the URL's path or a token
      const traced = <A, E>(name: string, labId: string, remote: GitRemote, effect: Effect.Effect<A, E>) =>
        Effect.withSpan(effect, name, { attributes: { "lab.id": labId, "git.host": hostOf(remote.url) } })
      return Git.of({
        fetch: (labId, remote) => traced("git.fetch", labId, remote, Effect.flatMap(HostMeter, (meter) => stores.fetchHead(labId, remote, meter))),
        probe: (labId, remote) => traced("git.probe", labId, remote, stores.probe(remote)),
        // a diff from a commit the store no longer has is expected (a full reconcile follows); a whole tree's is not
        diff: (labId, from, to, prefix) =>
          Option.isNone(from) ? stores.reading(labId, Iso.diff(stores.repo(labId), from, to, prefix)) : Iso.diff(stores.repo(labId), from, to, prefix),
        readBlob: (labId, oid, maxBytes) => stores.reading(labId, Iso.readBlob(stores.repo(labId), oid, maxBytes)),
        commitAll: (labId, parent, changes) =>
          Effect.zipRight(stores.ensure(labId), stores.reading(labId, stores.commits.commitAll(labId, parent, changes))),
        push: (labId, remote, commit, expected) =>
          traced("git.push", labId, remote, Effect.flatMap(HostMeter, (meter) => stores.commits.push(labId, remote, commit, expected, meter))),
        reaches: (labId, remote, tip, commit) =>
          traced("git.reaches", labId, remote, Effect.flatMap(HostMeter, (meter) => stores.commits.reaches(labId, remote, tip, commit, meter))),
        checkRemote: (url) =>
          Effect.flatMap(
            Effect.promise(() => transport.check(new URL(url))),
            Either.match({ onLeft: (reason) => Effect.fail(new RemoteRefused({ message: reason })), onRight: () => Effect.void })
          ),
        reset: stores.reset
      })
    })
  )
