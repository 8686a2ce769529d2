import { Effect, Layer, Option } from "effect"
import git, { Errors } from "isomorphic-git"
import fs from "node:fs"
import { readFile, rm } from "node:fs/promises"
import { join } from "node:path"
import { Git, GitError, PushRejected, type GitRemote } from "../../src/sync/Git.js"
import { authHeaders, makeHttpClient, thinPackFetch } from "./HttpClient.js"
import * as Iso from "./IsoOps.js"
import { openObjectReader, withPreloaded } from "./PackReader.js"
import { remoteTip, shallowClone, Unsupported } from "./ShallowClone.js"

export interface GitDiskOptions {
  /** Directory holding one bare repository per lab. */
  readonly root: string
  /** Deadline of each fetch or push. */
  readonly timeoutMillis: number
}

/** How long a lab's isomorphic-git cache outlives its last job. */
const CACHE_IDLE_MILLIS = 60_000

/** The branch ref the service commits on before pushing it to the remote branch. */
const OUTBOUND_REF = "refs/heads/lab-service-outbound"

/**
 * isomorphic-git on disk, speaking smart HTTP to the real host. Fetches are
 * shallow (depth 1) and single-branch; blobs are read from the local packs.
 */
export const layer = (options: GitDiskOptions) =>
  Layer.sync(Git, () => {
    const http = makeHttpClient(options.timeoutMillis)
    // isomorphic-git keeps parsed packs in its cache object. A lab's cache is kept between its jobs while they
    // come often (a fetch would otherwise reload and re-hash the whole pack to resolve a thin pack's deltas), and
    // dropped after a quiet minute so idle labs hold no memory.
    const caches = new Map<string, { readonly cache: object; readonly usedAt: number }>()
    const cacheOf = (labId: string): object => {
      const now = Date.now()
      for (const [id, entry] of caches) if (now - entry.usedAt > CACHE_IDLE_MILLIS) caches.delete(id)
      const cache = caches.get(labId)?.cache ?? {}
      caches.set(labId, { cache, usedAt: now })
      return cache
    }
    const repoOf = (labId: string): Iso.Repo => {
      const gitdir = join(options.root, `${labId}.git`)
      return { fs, gitdir, cache: cacheOf(labId), objects: openObjectReader(gitdir) }
    }
    const repos = new Map<string, Iso.Repo>()
    const repo = (labId: string) => {
      const existing = repos.get(labId)
      if (existing) return existing
      const created = repoOf(labId)
      repos.set(labId, created)
      return created
    }

    const ensure = (r: Iso.Repo) =>
      Iso.attempt("git init", async () => {
        if (!fs.existsSync(join(r.gitdir, "HEAD"))) await git.init({ fs, gitdir: r.gitdir, bare: true })
      })

    const fetchHead = (labId: string, remote: GitRemote) =>
      Effect.gen(function* () {
        const unchanged = yield* unchangedTip(join(options.root, `${labId}.git`), remote)
        if (Option.isSome(unchanged)) return Option.some(yield* Iso.headOf(repo(labId), unchanged.value))
        repos.get(labId)?.objects?.close()
        const r = repoOf(labId)
        repos.set(labId, r)
        yield* ensure(r)
        yield* Iso.attempt("git remote add", () => git.addRemote({ fs, gitdir: r.gitdir, remote: "origin", url: remote.url, force: true }))
        const cloned = yield* firstClone(r.gitdir, remote)
        if (Option.isSome(cloned)) {
          if (Option.isNone(cloned.value)) return Option.none()
          const { tip, objects } = cloned.value.value
          const fresh = { ...r, objects: withPreloaded(openObjectReader(r.gitdir), objects) }
          r.objects?.close()
          repos.set(labId, fresh)
          return Option.some(yield* Iso.headOf(fresh, tip))
        }
        const result = yield* Effect.tryPromise({
          try: () =>
            git.fetch({
              fs,
              http: thinPackFetch(http),
              gitdir: r.gitdir,
              remote: "origin",
              // `ref` names the local ref whose commit is offered as "have": the tip fetched last time, so the
              // server sends only what changed since (with `ref: branch` there was no such local ref, and every
              // pull downloaded and indexed the whole tree again); `remoteRef` is the branch to fetch
              ref: `refs/remotes/origin/${remote.branch}`,
              remoteRef: remote.branch,
              singleBranch: true,
              depth: 1,
              tags: false,
              headers: authHeaders(Option.getOrUndefined(remote.token)),
              cache: r.cache
            }),
          catch: (cause) => cause
        }).pipe(
          Effect.map((res) => Option.fromNullable(res.fetchHead)),
          Effect.catchAll((cause) =>
            // an empty repository, or one without the branch yet
            cause instanceof Errors.NotFoundError
              ? Effect.succeed(Option.none<string>())
              : Effect.fail(new GitError({ message: `fetch ${remote.url} ${remote.branch}: ${describe(cause)}` }))
          )
        )
        if (Option.isNone(result)) return Option.none()
        return Option.some(yield* Iso.headOf(r, result.value))
      })

    /**
     * A lab's first fetch, natively (ShallowClone.ts): Some(tip, or None without the branch); None when the lab
     * fetched before, or the server needs what only isomorphic-git speaks: then isomorphic-git fetches.
     */
    const firstClone = (gitdir: string, remote: GitRemote) =>
      Effect.tryPromise({
        try: async () => {
          if (fs.existsSync(join(gitdir, "refs", "remotes", "origin", ...remote.branch.split("/")))) return Option.none()
          const cloned = await shallowClone({
            gitdir,
            url: remote.url,
            branch: remote.branch,
            headers: authHeaders(Option.getOrUndefined(remote.token)),
            timeoutMillis: options.timeoutMillis
          })
          return Option.some(Option.fromNullable(cloned))
        },
        catch: (cause) => cause
      }).pipe(
        Effect.catchAll((cause) =>
          cause instanceof Unsupported
            ? Effect.succeed(Option.none())
            : Effect.fail(new GitError({ message: `fetch ${remote.url} ${remote.branch}: ${describe(cause)}` }))
        )
      )

    /**
     * The branch tip when it is the one fetched last time: one GET of the ref advertisement instead of
     * isomorphic-git's whole fetch (a forced sync or a webhook with nothing new, ~50 ms less). None when it
     * moved, the lab never fetched, or the server needs what only isomorphic-git speaks.
     */
    const unchangedTip = (gitdir: string, remote: GitRemote) =>
      Effect.tryPromise({
        try: async () => {
          const local = await readFile(join(gitdir, "refs", "remotes", "origin", ...remote.branch.split("/")), "utf8").catch(() => undefined)
          if (local === undefined) return Option.none<string>()
          const tip = await remoteTip({
            url: remote.url,
            branch: remote.branch,
            headers: authHeaders(Option.getOrUndefined(remote.token)),
            timeoutMillis: options.timeoutMillis
          })
          return tip !== undefined && tip === local.trim() ? Option.some(tip) : Option.none<string>()
        },
        catch: (cause) => cause
      }).pipe(
        Effect.catchAll((cause) =>
          cause instanceof Unsupported
            ? Effect.succeed(Option.none<string>())
            : Effect.fail(new GitError({ message: `fetch ${remote.url} ${remote.branch}: ${describe(cause)}` }))
        )
      )

    const push = (labId: string, remote: GitRemote, commit: string) =>
      Effect.gen(function* () {
        const r = repo(labId)
        yield* Iso.attempt("git update-ref", () => git.writeRef({ fs, gitdir: r.gitdir, ref: OUTBOUND_REF, value: commit, force: true }))
        yield* Effect.tryPromise({
          try: () =>
            git.push({
              fs,
              http,
              gitdir: r.gitdir,
              url: remote.url,
              ref: OUTBOUND_REF,
              remoteRef: `refs/heads/${remote.branch}`,
              headers: authHeaders(Option.getOrUndefined(remote.token)),
              cache: r.cache
            }),
          catch: (cause) =>
            isRejection(cause)
              ? new PushRejected({ message: `push to ${remote.url} ${remote.branch} rejected: ${describe(cause)}` })
              : new GitError({ message: `push ${remote.url} ${remote.branch}: ${describe(cause)}` })
        })
      })

    return Git.of({
      fetch: fetchHead,
      diff: (labId, from, to, prefix) => Iso.diff(repo(labId), from, to, prefix),
      readBlob: (labId, oid) => Iso.readBlob(repo(labId), oid),
      commit: (labId, parent, edits, info) => Effect.zipRight(ensure(repo(labId)), Iso.commit(repo(labId), parent, edits, info)),
      push: (labId, remote, commit) => push(labId, remote, commit),
      reset: (labId) =>
        Effect.promise(async () => {
          repos.get(labId)?.objects?.close()
          repos.delete(labId)
          caches.delete(labId)
          await rm(join(options.root, `${labId}.git`), { recursive: true, force: true })
        })
    })
  })

const describe = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/**
 * The remote moved: isomorphic-git says so before sending (not a fast-forward,
 * or the new remote tip is unknown locally), or the server refuses the update.
 */
const isRejection = (cause: unknown): boolean =>
  cause instanceof Errors.PushRejectedError ||
  cause instanceof Errors.NotFoundError ||
  (cause instanceof Errors.GitPushError && /non-fast-forward|fetch first|failed to update ref|stale info/i.test(describe(cause)))
