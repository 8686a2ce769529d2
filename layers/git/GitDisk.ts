import { Effect, Either, Layer, Option } from "effect"
import git from "isomorphic-git"
import fs from "node:fs"
import { rm } from "node:fs/promises"
import { join } from "node:path"
import { Git, GitError, type GitRemote, RemoteRefused } from "../../src/sync/Git.js"
import { type AllowedHosts, NO_EXCEPTIONS } from "../../src/sync/HostPolicy.js"
import { type Ceilings, DEFAULT_CEILINGS, fetchInto } from "./Fetch.js"
import { makeDiskCommits } from "./DiskCommits.js"
import { describeFailure } from "./GitFailure.js"
import * as Iso from "./IsoOps.js"
import { compactPacks } from "./PackCompaction.js"
import { type ObjectReader, openObjectReader } from "./PackReader.js"
import { withPreloaded } from "./PreloadedReader.js"
import { storeFs } from "./StoreFs.js"
import { makeTransport, type Resolve, systemResolve } from "./Transport.js"

export interface GitDiskOptions {
  /** Directory holding one bare repository per lab. */
  readonly root: string
  /** Deadline of each fetch or push. */
  readonly timeoutMillis: number
  /** GIT_ALLOWED_HOSTS: the private hosts git traffic may reach (by default, none: public addresses only). */
  readonly allowedHosts?: AllowedHosts
  /** GIT_MAX_PACK_BYTES, GIT_MAX_OBJECTS, GIT_MAX_INFLATED_BYTES. */
  readonly ceilings?: Ceilings
  /** How names are resolved (a test plays a rebinding name server with it). */
  readonly resolve?: Resolve
}

/** How long a lab's isomorphic-git cache outlives its last job. */
const CACHE_IDLE_MILLIS = 60_000

/**
 * Git on disk: the service's own smart-HTTP fetch (Fetch.ts) through the
 * guarded transport (Transport.ts), objects read by its own reader
 * (PackReader.ts), commits built and pushed natively (DiskCommits.ts);
 * isomorphic-git, for what remains (an unusual tree's diff), sees the packs only
 * through that reader (StoreFs.ts).
 */
export const layer = (options: GitDiskOptions) =>
  Layer.scoped(
    Git,
    Effect.gen(function* () {
      const transport = makeTransport({ allowed: options.allowedHosts ?? NO_EXCEPTIONS, resolve: options.resolve ?? systemResolve })
      yield* Effect.addFinalizer(() => Effect.sync(transport.close))
      const ceilings = options.ceilings ?? DEFAULT_CEILINGS
      const gitdirOf = (labId: string) => join(options.root, `${labId}.git`)
      // isomorphic-git keeps parsed objects in its cache object: kept between a lab's jobs while they come often,
      // dropped after a quiet minute so idle labs hold no memory. Not effect's Cache: its time-to-live runs from the
      // load, not the last use, and an expired entry stays in memory until its key is asked for again (or capacity
      // pushes it out), the opposite of what this is for; and it is read synchronously, inside isomorphic-git's setup
      const caches = new Map<string, { readonly cache: object; readonly usedAt: number }>()
      const cacheOf = (labId: string): object => {
        const now = Date.now()
        for (const [id, entry] of caches) if (now - entry.usedAt > CACHE_IDLE_MILLIS) caches.delete(id)
        const cache = caches.get(labId)?.cache ?? {}
        caches.set(labId, { cache, usedAt: now })
        return cache
      }
      const repos = new Map<string, Iso.Repo & { readonly objects: ObjectReader }>()
      const open = (labId: string, objects: ObjectReader) => {
        const gitdir = gitdirOf(labId)
        const repo = { fs: storeFs(gitdir, () => objects), gitdir, cache: cacheOf(labId), objects }
        repos.set(labId, repo)
        return repo
      }
      const repo = (labId: string) => repos.get(labId) ?? open(labId, openObjectReader(gitdirOf(labId)))

      const ensure = (labId: string) =>
        Iso.attempt("git init", async () => {
          const gitdir = gitdirOf(labId)
          if (!fs.existsSync(join(gitdir, "HEAD"))) await git.init({ fs, gitdir, bare: true })
        })

      const failed = (what: string, remote: GitRemote) => (cause: unknown) =>
        new GitError({ message: `${what} ${remote.url} ${remote.branch}: ${describeFailure(cause)}` })

      /** Merge the store's small packs (one per fetch and per push) before they slow every lookup. */
      const compact = (labId: string) =>
        Effect.try(() =>
          compactPacks(gitdirOf(labId), () => {
            repos.get(labId)?.objects.close()
            repos.delete(labId)
            caches.delete(labId)
          })
        ).pipe(Effect.catchAll((cause) => Effect.logWarning(`the git store of ${labId} was not compacted`, cause)))

      const fetchHead = (labId: string, remote: GitRemote) =>
        Effect.gen(function* () {
          yield* ensure(labId)
          yield* compact(labId)
          const current = repo(labId)
          const fetched = yield* Effect.tryPromise({
            try: () =>
              fetchInto({
                transport,
                gitdir: current.gitdir,
                url: remote.url,
                branch: remote.branch,
                token: Option.getOrUndefined(remote.token),
                timeoutMillis: options.timeoutMillis,
                ceilings,
                store: current.objects
              }),
            catch: failed("fetch", remote)
          })
          if (fetched === undefined) return Option.none()
          if (fetched.objects.size === 0) return Option.some(yield* Iso.headOf(current, fetched.tip))
          // a new pack: a fresh reader, handed the objects the fetch already holds for the first reads
          current.objects.close()
          const fresh = open(labId, withPreloaded(openObjectReader(current.gitdir), fetched.objects))
          return Option.some(yield* Iso.headOf(fresh, fetched.tip))
        })

      const commits = makeDiskCommits({
        transport,
        timeoutMillis: options.timeoutMillis,
        gitdirOf,
        objectsOf: (labId) => repo(labId).objects,
        fetchSettings: (labId) => ({ transport, gitdir: gitdirOf(labId), timeoutMillis: options.timeoutMillis, ceilings, store: repo(labId).objects })
      })

      const checkRemote = (url: string) =>
        Effect.flatMap(
          Effect.promise(() => transport.check(new URL(url))),
          Either.match({ onLeft: (reason) => Effect.fail(new RemoteRefused({ message: reason })), onRight: () => Effect.void })
        )

      return Git.of({
        fetch: fetchHead,
        diff: (labId, from, to, prefix) => Iso.diff(repo(labId), from, to, prefix),
        readBlob: (labId, oid, maxBytes) => Iso.readBlob(repo(labId), oid, maxBytes),
        commitAll: (labId, parent, changes) => Effect.zipRight(ensure(labId), commits.commitAll(labId, parent, changes)),
        push: commits.push,
        reaches: commits.reaches,
        checkRemote,
        reset: (labId) =>
          Effect.promise(async () => {
            repos.get(labId)?.objects.close()
            repos.delete(labId)
            commits.forget(labId)
            caches.delete(labId)
            await rm(gitdirOf(labId), { recursive: true, force: true })
          })
      })
    })
  )
