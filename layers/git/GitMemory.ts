import { Context, Effect, Either, Layer, Option } from "effect"
import git from "isomorphic-git"
import { createFsFromVolume, Volume } from "memfs"
import { createHash } from "node:crypto"
import { Git, GitError, PushRejected, RemoteRefused, type GitRemote, type Head } from "../../src/sync/Git.js"
import { literalVerdict, NO_EXCEPTIONS } from "../../src/sync/HostPolicy.js"
import * as Iso from "./IsoOps.js"

/**
 * An in-memory Git for fast tests: each remote URL is a bare repository on a
 * memfs volume, and a lab works directly in its remote's repository (fetch reads
 * the branch ref, push moves it with a compare-and-set). `InMemoryRemotes`
 * lets a test play the outside world: push commits, or make the host fail.
 */
export class InMemoryRemotes extends Context.Tag("InMemoryRemotes")<
  InMemoryRemotes,
  {
    /** Commit files (content, or null to delete) on a remote branch, as someone else would. */
    readonly pushFromOutside: (
      url: string,
      branch: string,
      files: Record<string, string | Uint8Array | null>,
      message?: string
    ) => Effect.Effect<Head, GitError>
    /** The files on a remote branch, path -> content. */
    readonly read: (url: string, branch: string) => Effect.Effect<ReadonlyMap<string, string>, GitError>
    /** The files on a remote branch as bytes, path -> content (binary content stays as it is). */
    readonly tree: (url: string, branch: string) => Effect.Effect<ReadonlyMap<string, Uint8Array>, GitError>
    /** The branch's history, newest first (at most `depth` commits): each commit's id, author email and message. */
    readonly log: (url: string, branch: string, depth?: number) => Effect.Effect<ReadonlyArray<RemoteCommit>, GitError>
    /** The next `n` fetches and pushes fail as if the host were down. */
    readonly failNext: (n: number) => Effect.Effect<void>
  }
>() {}

/** One commit of a remote's history, as `InMemoryRemotes.log` reports it. */
export interface RemoteCommit {
  readonly commit: string
  readonly authorEmail: string
  readonly message: string
}

export const layer = Layer.effectContext(
  Effect.sync(() => {
    const fs = createFsFromVolume(new Volume())
    const links = new Map<string, string>()
    let failures = 0
    const gitdirOf = (url: string) => `/remotes/${createHash("sha1").update(url).digest("hex")}.git`
    const repoOf = (url: string): Iso.Repo => ({ fs, gitdir: gitdirOf(url), cache: {} })
    const repoOfLab = (labId: string): Effect.Effect<Iso.Repo, GitError> => {
      const url = links.get(labId)
      return url ? Effect.succeed(repoOf(url)) : Effect.fail(new GitError({ message: `lab ${labId} has not fetched yet` }))
    }
    const ensure = (r: Iso.Repo) =>
      Iso.attempt("git init", async () => {
        if (!fs.existsSync(`${r.gitdir}/HEAD`)) await git.init({ fs, gitdir: r.gitdir, bare: true })
      })
    const maybeFail = (what: string) =>
      Effect.suspend(() => {
        if (failures <= 0) return Effect.void
        failures--
        return Effect.fail(new GitError({ message: `${what}: 503 Service Unavailable (simulated)` }))
      })
    const tip = (r: Iso.Repo, branch: string) =>
      Effect.promise(() => git.resolveRef({ fs, gitdir: r.gitdir, ref: `refs/heads/${branch}` }).then(Option.some, () => Option.none<string>()))

    const fetch = (labId: string, remote: GitRemote) =>
      Effect.gen(function* () {
        yield* maybeFail(`fetch ${remote.url}`)
        links.set(labId, remote.url)
        const r = repoOf(remote.url)
        yield* ensure(r)
        const commit = yield* tip(r, remote.branch)
        return Option.isNone(commit) ? Option.none<Head>() : Option.some(yield* Iso.headOf(r, commit.value))
      })

    const push = (labId: string, remote: GitRemote, commit: string, expected: Option.Option<string>) =>
      Effect.gen(function* () {
        yield* maybeFail(`push ${remote.url}`)
        const r = yield* repoOfLab(labId)
        const current = yield* tip(r, remote.branch)
        if (!Option.getEquivalence<string>((a, b) => a === b)(current, expected)) {
          return yield* new PushRejected({ message: `push to ${remote.url} rejected: not a fast-forward` })
        }
        yield* Iso.attempt("update ref", () =>
          git.writeRef({ fs, gitdir: r.gitdir, ref: `refs/heads/${remote.branch}`, value: commit, force: true })
        )
      })

    const treeOf = (url: string, branch: string) =>
      Effect.gen(function* () {
        const r = repoOf(url)
        const commit = yield* tip(r, branch)
        const out = new Map<string, Uint8Array>()
        if (Option.isNone(commit)) return out
        for (const change of yield* Iso.diff(r, Option.none(), commit.value, Option.none())) {
          if (Option.isSome(change.after) && change.after.value.type === "blob") {
            const blob = yield* Iso.readBlob(r, change.after.value.oid, Number.MAX_SAFE_INTEGER)
            out.set(change.path, Option.getOrElse(blob.content, () => new Uint8Array()))
          }
        }
        return out
      })

    const git_ = Git.of({
      fetch,
      diff: (labId, from, to, prefix) => Effect.flatMap(repoOfLab(labId), (r) => Iso.diff(r, from, to, prefix)),
      readBlob: (labId, oid, maxBytes) => Effect.flatMap(repoOfLab(labId), (r) => Iso.readBlob(r, oid, maxBytes)),
      commitAll: (labId, parent, changes) =>
        Effect.flatMap(repoOfLab(labId), (r) =>
          Effect.gen(function* () {
            const heads: Array<Option.Option<Head>> = []
            let tip = parent
            for (const change of changes) {
              const next = yield* Iso.commit(r, tip, [change], change.info)
              // a change that leaves the tree as it was makes no commit
              if (Option.isNone(tip) || next.tree !== tip.value.tree) tip = Option.some(next)
              heads.push(tip)
            }
            return heads
          })
        ),
      reaches: (labId, _remote, tip, commit) =>
        Effect.flatMap(repoOfLab(labId), (r) =>
          Iso.attempt("git log", async () => {
            const history = await git.log({ fs, gitdir: r.gitdir, ref: tip, depth: 1_000 })
            return history.some((entry) => entry.oid === commit)
          })
        ),
      push,
      // nothing is connected to; the checks that need no lookup still apply, as on disk
      checkRemote: (url) =>
        Either.match(literalVerdict(NO_EXCEPTIONS, new URL(url)), {
          onLeft: (reason) => Effect.fail(new RemoteRefused({ message: reason })),
          onRight: () => Effect.void
        }),
      reset: (labId) => Effect.sync(() => void links.delete(labId))
    })

    const remotes = InMemoryRemotes.of({
      pushFromOutside: (url, branch, files, message = "outside change") =>
        Effect.gen(function* () {
          const r = repoOf(url)
          yield* ensure(r)
          const parent = yield* tip(r, branch)
          const parentHead = Option.isSome(parent) ? Option.some(yield* Iso.headOf(r, parent.value)) : Option.none<Head>()
          const edits = Object.entries(files).map(([path, content]) => ({ path, content }))
          const head = yield* Iso.commit(r, parentHead, edits, {
            message,
            authorName: "Outside Author",
            authorEmail: "outside@example.com"
          })
          yield* Iso.attempt("update ref", () => git.writeRef({ fs, gitdir: r.gitdir, ref: `refs/heads/${branch}`, value: head.commit, force: true }))
          return head
        }),
      read: (url, branch) =>
        Effect.map(treeOf(url, branch), (files) => new Map([...files].map(([path, bytes]) => [path, Buffer.from(bytes).toString("utf8")]))),
      tree: (url, branch) => treeOf(url, branch),
      log: (url, branch, depth = 10_000) =>
        Effect.gen(function* () {
          const r = repoOf(url)
          const commit = yield* tip(r, branch)
          if (Option.isNone(commit)) return []
          const history = yield* Iso.attempt("git log", () => git.log({ fs, gitdir: r.gitdir, ref: commit.value, depth }))
          return history.map((entry) => ({ commit: entry.oid, authorEmail: entry.commit.author.email, message: entry.commit.message }))
        }),
      failNext: (n) => Effect.sync(() => void (failures = n))
    })

    return Context.make(Git, git_).pipe(Context.add(InMemoryRemotes, remotes))
  })
)
