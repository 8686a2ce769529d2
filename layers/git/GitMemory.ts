import { Context, Effect, Either, Layer, Option } from "effect"
import git from "isomorphic-git"
import { createFsFromVolume, Volume } from "memfs"
import { createHash } from "node:crypto"
import { join } from "node:path"
import { type Change, Git, GitError, PushRejected, RemoteRefused, type GitRemote, type Head } from "../../src/sync/Git.js"
import { literalVerdict, NO_EXCEPTIONS } from "../../src/sync/HostPolicy.js"
import * as Iso from "./IsoOps.js"
import { looseObject } from "./LooseObject.js"
import type { ObjectReader } from "./PackReader.js"
import { bufferAccess } from "./RandomAccess.js"

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
    /** The branch's history, newest first (at most `depth` commits): each commit's id, committer email and message. */
    readonly log: (url: string, branch: string, depth?: number) => Effect.Effect<ReadonlyArray<RemoteCommit>, GitError>
    /** The next `n` fetches and pushes fail as if the host were down. */
    readonly failNext: (n: number) => Effect.Effect<void>
  }
>() {}

/** One commit of a remote's history, as `InMemoryRemotes.log` reports it. */
export interface RemoteCommit {
  readonly commit: string
  readonly committerEmail: string
  readonly message: string
}

type MemFs = ReturnType<typeof createFsFromVolume>

/**
 * The volume's objects (isomorphic-git writes them loose) through the same `ObjectReader` interface as the disk
 * store's PackReader: the diff and the blob reads then take the fast paths production takes (IsoOps `fastDiff`,
 * `readBlob` through the reader), and isomorphic-git only what they leave to it.
 */
const volumeObjects = (fs: MemFs, gitdir: string): ObjectReader => {
  const readBounded = (oid: string, maxBytes: number) => {
    if (!/^[0-9a-f]{40}$/.test(oid)) return undefined
    let raw: string | Buffer
    try {
      raw = fs.readFileSync(join(gitdir, "objects", oid.slice(0, 2), oid.slice(2)))
    } catch {
      return undefined
    }
    return typeof raw === "string" ? undefined : looseObject(raw, oid, maxBytes)
  }
  const read = (oid: string) => {
    const info = readBounded(oid, Number.MAX_SAFE_INTEGER)
    return info?.content === undefined ? undefined : { type: info.type, content: info.content }
  }
  return {
    read,
    readBounded,
    deltaDepth: () => 0,
    holds: (oid) => /^[0-9a-f]{40}$/.test(oid) && fs.existsSync(join(gitdir, "objects", oid.slice(0, 2), oid.slice(2))),
    spill: (oid) => Promise.resolve(Option.getOrUndefined(Option.map(Option.fromNullable(read(oid)), (o) => bufferAccess(o.content)))),
    close: () => undefined
  }
}

/** The in-memory remotes: a volume, which remote each lab fetched last, the failures a test asked for. */
interface MemoryRemotes {
  readonly fs: MemFs
  readonly links: Map<string, string>
  failures: number
}

const gitdirOf = (url: string) => `/remotes/${createHash("sha1").update(url).digest("hex")}.git`

const repoOf = (v: MemoryRemotes, url: string): Iso.Repo => ({ fs: v.fs, gitdir: gitdirOf(url), cache: {}, objects: volumeObjects(v.fs, gitdirOf(url)) })

const repoOfLab = (v: MemoryRemotes, labId: string): Effect.Effect<Iso.Repo, GitError> => {
  const url = v.links.get(labId)
  return url ? Effect.succeed(repoOf(v, url)) : Effect.fail(new GitError({ message: `lab ${labId} has not fetched yet` }))
}

const ensure = (v: MemoryRemotes, r: Iso.Repo) =>
  Iso.attempt("git init", async () => {
    if (!v.fs.existsSync(`${r.gitdir}/HEAD`)) await git.init({ fs: v.fs, gitdir: r.gitdir, bare: true })
  })

const maybeFail = (v: MemoryRemotes, what: string) =>
  Effect.suspend(() => {
    if (v.failures <= 0) return Effect.void
    v.failures--
    return Effect.fail(new GitError({ message: `${what}: 503 Service Unavailable (simulated)` }))
  })

const tip = (v: MemoryRemotes, r: Iso.Repo, branch: string) =>
  Effect.promise(() => git.resolveRef({ fs: v.fs, gitdir: r.gitdir, ref: `refs/heads/${branch}` }).then(Option.some, () => Option.none<string>()))

const setTip = (v: MemoryRemotes, r: Iso.Repo, branch: string, commit: string) =>
  Iso.attempt("update ref", () => git.writeRef({ fs: v.fs, gitdir: r.gitdir, ref: `refs/heads/${branch}`, value: commit, force: true }))

const fetch = (v: MemoryRemotes, labId: string, remote: GitRemote) =>
  Effect.gen(function* () {
    yield* maybeFail(v, `fetch ${remote.url}`)
    v.links.set(labId, remote.url)
    const r = repoOf(v, remote.url)
    yield* ensure(v, r)
    const commit = yield* tip(v, r, remote.branch)
    return Option.isNone(commit) ? Option.none<Head>() : Option.some(yield* Iso.headOf(r, commit.value))
  })

const push = (v: MemoryRemotes, labId: string, remote: GitRemote, commit: string, expected: Option.Option<string>) =>
  Effect.gen(function* () {
    yield* maybeFail(v, `push ${remote.url}`)
    const r = yield* repoOfLab(v, labId)
    const current = yield* tip(v, r, remote.branch)
    if (!Option.getEquivalence<string>((a, b) => a === b)(current, expected)) {
      return yield* new PushRejected({ message: `push to ${remote.url} rejected: not a fast-forward` })
    }
    yield* setTip(v, r, remote.branch, commit)
  })

const commitAll = (r: Iso.Repo, parent: Option.Option<Head>, changes: ReadonlyArray<Change>) =>
  Effect.gen(function* () {
    const heads: Array<Option.Option<Head>> = []
    let at = parent
    for (const change of changes) {
      const next = yield* Iso.commit(r, at, [change], change.info)
      // a change that leaves the tree as it was makes no commit
      if (Option.isNone(at) || next.tree !== at.value.tree) at = Option.some(next)
      heads.push(at)
    }
    return heads
  })

const history = (v: MemoryRemotes, r: Iso.Repo, ref: string, depth: number) =>
  Iso.attempt("git log", () => git.log({ fs: v.fs, gitdir: r.gitdir, ref, depth }))

const treeOf = (v: MemoryRemotes, url: string, branch: string) =>
  Effect.gen(function* () {
    const r = repoOf(v, url)
    const commit = yield* tip(v, r, branch)
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

const gitOf = (v: MemoryRemotes) =>
  Git.of({
    fetch: (labId, remote) => fetch(v, labId, remote),
    diff: (labId, from, to, prefix) => Effect.flatMap(repoOfLab(v, labId), (r) => Iso.diff(r, from, to, prefix)),
    readBlob: (labId, oid, maxBytes) => Effect.flatMap(repoOfLab(v, labId), (r) => Iso.readBlob(r, oid, maxBytes)),
    commitAll: (labId, parent, changes) => Effect.flatMap(repoOfLab(v, labId), (r) => commitAll(r, parent, changes)),
    reaches: (labId, _remote, from, commit) =>
      Effect.flatMap(repoOfLab(v, labId), (r) => Effect.map(history(v, r, from, 1_000), (log) => log.some((entry) => entry.oid === commit))),
    push: (labId, remote, commit, expected) => push(v, labId, remote, commit, expected),
    // nothing is connected to; the checks that need no lookup still apply, as on disk
    // nothing to wait for: the in-memory remotes always answer
    probe: () => Effect.void,
    checkRemote: (url) =>
      Either.match(literalVerdict(NO_EXCEPTIONS, new URL(url)), {
        onLeft: (reason) => Effect.fail(new RemoteRefused({ message: reason })),
        onRight: () => Effect.void
      }),
    reset: (labId) => Effect.sync(() => void v.links.delete(labId))
  })

const pushFromOutside = (v: MemoryRemotes, url: string, branch: string, files: Record<string, string | Uint8Array | null>, message: string) =>
  Effect.gen(function* () {
    const r = repoOf(v, url)
    yield* ensure(v, r)
    const parent = yield* tip(v, r, branch)
    const parentHead = Option.isSome(parent) ? Option.some(yield* Iso.headOf(r, parent.value)) : Option.none<Head>()
    const edits = Object.entries(files).map(([path, content]) => ({ path, content }))
    const head = yield* Iso.commit(r, parentHead, edits, { message, authorName: "Outside Author", authorEmail: "outside@example.com" })
    yield* setTip(v, r, branch, head.commit)
    return head
  })

const remotesOf = (v: MemoryRemotes) =>
  InMemoryRemotes.of({
    pushFromOutside: (url, branch, files, message = "outside change") => pushFromOutside(v, url, branch, files, message),
    read: (url, branch) =>
      Effect.map(treeOf(v, url, branch), (files) => new Map([...files].map(([path, bytes]) => [path, Buffer.from(bytes).toString("utf8")]))),
    tree: (url, branch) => treeOf(v, url, branch),
    log: (url, branch, depth = 10_000) =>
      Effect.gen(function* () {
        const r = repoOf(v, url)
        const commit = yield* tip(v, r, branch)
        if (Option.isNone(commit)) return []
        const log = yield* history(v, r, commit.value, depth)
        return log.map((entry) => ({ commit: entry.oid, committerEmail: entry.commit.committer.email, message: entry.commit.message }))
      }),
    failNext: (n) => Effect.sync(() => void (v.failures = n))
  })

export const layer = Layer.effectContext(
  Effect.sync(() => {
    const v: MemoryRemotes = { fs: createFsFromVolume(new Volume()), links: new Map(), failures: 0 }
    return Context.make(Git, gitOf(v)).pipe(Context.add(InMemoryRemotes, remotesOf(v)))
  })
)
