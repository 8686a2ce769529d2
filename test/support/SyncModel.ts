/**
 * A model of the git sync (README "Git sync", "Auto-push") for model-based tests (test/sync/model.test.ts): random
 * sequences of steps (API writes and deletes, outside pushes, webhooks, forced syncs, outbox drains, faults, a pull
 * paused while the API writes), a driver that plays them against the service, and the invariants a user checks once
 * everything is quiet. The model records what was acknowledged and when; the checks compare it with the repository
 * and the lab.
 */
import { createHash } from "node:crypto"
import { isLabPath } from "../../src/sync/PullPlan.js"
import { decodeText, isSkippedPath, MAX_FILE_BYTES } from "../../src/sync/Rules.js"
import {
  type ApiStep,
  apiText,
  INITIAL_REMOTE,
  LOCAL_ONLY,
  type Fault,
  type OutsideStep,
  outsideBytes,
  PULSE_PATH,
  type Step
} from "./SyncSteps.js"

/** git's blob id of some bytes; "-" for an absent path. */
const keyOf = (bytes: Uint8Array | null | undefined) =>
  bytes == null ? "-" : createHash("sha1").update(`blob ${bytes.byteLength}\0`).update(bytes).digest("hex")

/** An acknowledged write (content) or delete (null), known by the actor its commit names. */
export interface Op {
  readonly actor: string
  readonly path: string
  readonly content: string | null
  readonly ackSeq: number
  /** When it landed in the repository (exact runs), and how many commits that should have made (0: a no-op). */
  landed?: { readonly seq: number; readonly commits: 0 | 1 }
}

/** What the driver reads once the sync is quiet. */
export interface Observed {
  /** The branch's files, repository path -> bytes. */
  readonly remote: ReadonlyMap<string, Uint8Array>
  /** The lab's files, lab path -> content. */
  readonly lab: ReadonlyMap<string, string>
  /** The branch's history: each commit's id, author email and message. */
  readonly history: ReadonlyArray<{ readonly commit: string; readonly committerEmail: string; readonly message: string }>
  readonly pendingCommits: number
  readonly lastError: string | null
}

export const SERVICE_EMAIL = "lab-service@users.noreply.local"

/**
 * What was acknowledged, and when (`seq` orders every step and sub-step). An exact model (the in-memory run, where the
 * test decides when a push happens) knows when each write landed and so the whole repository; a tolerant one (the
 * real server, whose worker pushes on its own) knows for each path the contents that may be there.
 */
export class SyncModel {
  seq = 0
  readonly ops: Array<Op> = []
  readonly outside: Array<{ readonly seq: number; readonly path: string; readonly bytes: Uint8Array | null }> = []
  readonly outsideCommits: Array<string> = []
  /** The repository as the model expects it (exact runs). */
  readonly remote = new Map<string, Uint8Array>()

  constructor(readonly exact: boolean) {
    for (const [path, content] of Object.entries(INITIAL_REMOTE)) this.remote.set(path, Buffer.from(content))
  }

  tick() {
    return ++this.seq
  }

  acked(path: string, content: string | null, actor: string) {
    this.ops.push({ actor, path, content, ackSeq: this.tick() })
  }

  pushedOutside(commit: string, edits: ReadonlyArray<readonly [string, Uint8Array | null]>) {
    const seq = this.tick()
    this.outsideCommits.push(commit)
    for (const [path, bytes] of edits) {
      this.outside.push({ seq, path, bytes })
      if (bytes === null) this.remote.delete(path)
      else this.remote.set(path, bytes)
    }
  }

  unlanded() {
    return this.ops.filter((op) => op.landed === undefined)
  }

  /** These ops (by actor) landed now, in the order they were acknowledged: each is a commit unless it changes nothing. */
  land(actors: ReadonlySet<string>) {
    const seq = this.tick()
    for (const op of this.unlanded()) {
      if (!actors.has(op.actor)) continue
      const path = op.path.slice(1)
      const bytes = op.content === null ? null : Buffer.from(op.content)
      op.landed = { seq, commits: keyOf(this.remote.get(path)) === keyOf(bytes) ? 0 : 1 }
      if (bytes === null) this.remote.delete(path)
      else this.remote.set(path, bytes)
    }
  }

  /**
   * A push builds its writes on the head it fetched. When every one of them leaves that head as it is, nothing is
   * pushed: they landed then, at the fetch, before anything pushed from outside since (a paused step's `during`).
   */
  landedAtFetch(chunk: ReadonlyArray<Op>, fetched: ReadonlyMap<string, Uint8Array>, landed: ReadonlySet<string>) {
    if (chunk.length === 0 || !chunk.every((op) => landed.has(op.actor))) return false
    const changesNothing = (op: Op) => keyOf(fetched.get(op.path.slice(1))) === keyOf(op.content === null ? null : Buffer.from(op.content))
    if (!chunk.every(changesNothing)) return false
    const seq = this.tick()
    for (const op of chunk) op.landed = { seq, commits: 0 }
    return true
  }

  /** Tolerant: the blob ids the path may end at (the newest write, or an outside push after it was acknowledged). */
  candidates(path: string): ReadonlyArray<string> {
    const last = this.ops.filter((op) => op.path.slice(1) === path).at(-1)
    const outside = this.outside.filter((o) => o.path === path && (last === undefined || o.seq > last.ackSeq)).at(-1)
    const initial = INITIAL_REMOTE[path]
    if (last === undefined) return [keyOf(outside !== undefined ? outside.bytes : initial === undefined ? null : Buffer.from(initial))]
    const written = keyOf(last.content === null ? null : Buffer.from(last.content))
    return outside === undefined ? [written] : [written, keyOf(outside.bytes)]
  }
}

/** The lab a repository tree makes under the sync rules (spec 4.4), plus the files that never were in git. */
export const labOf = (remote: ReadonlyMap<string, Uint8Array>) => {
  const lab = new Map<string, string>(Object.entries(LOCAL_ONLY))
  for (const [path, bytes] of remote) {
    if (isSkippedPath(path) || !isLabPath(`/${path}`) || bytes.byteLength > MAX_FILE_BYTES) continue
    const text = decodeText(bytes)
    if (text !== undefined) lab.set(`/${path}`, text)
  }
  return lab
}

const brief = (s: string | undefined) => (s === undefined ? "(absent)" : JSON.stringify(s.length > 40 ? `${s.slice(0, 37)}…` : s))

/** The actor named in a service commit's message (`Written through Lab Service by <actor>.`). */
const actorOf = (message: string) => /Written through Lab Service by (.+)\.\s*$/.exec(message)?.[1]

/** Every invariant a user checks once the sync is quiet; the broken ones, described. */
export const violations = (model: SyncModel, seen: Observed): Array<string> => {
  const out: Array<string> = []
  // (a) one commit per acknowledged operation (none for one that changed nothing), none that no operation explains
  const commitsBy = new Map<string, number>()
  for (const c of seen.history) {
    if (c.committerEmail !== SERVICE_EMAIL) continue
    const actor = actorOf(c.message) ?? "?"
    commitsBy.set(actor, (commitsBy.get(actor) ?? 0) + 1)
  }
  const actors = new Set(model.ops.map((op) => op.actor))
  for (const [actor, n] of commitsBy) if (!actors.has(actor)) out.push(`${n} service commit(s) by ${actor}, which is no acknowledged operation`)
  for (const op of model.ops) {
    const n = commitsBy.get(op.actor) ?? 0
    const what = `${op.content === null ? "delete" : "write"} of ${op.path} (${op.actor})`
    if (model.exact && op.landed === undefined) out.push(`${what} never landed`)
    else if (model.exact && op.landed !== undefined && n !== op.landed.commits) out.push(`${what}: ${n} commits, expected ${op.landed.commits}`)
    else if (n > 1) out.push(`${what}: ${n} commits`)
    else if (!model.exact && n === 0 && op.content !== null) out.push(`${what}: no commit`)
  }
  // (a) the repository holds each write not overwritten since
  const paths = new Set([...seen.remote.keys(), ...model.remote.keys(), ...model.ops.map((op) => op.path.slice(1))])
  for (const path of [...paths].sort()) {
    if (path === PULSE_PATH) continue
    const actual = keyOf(seen.remote.get(path))
    const expected = model.exact ? [keyOf(model.remote.get(path))] : model.candidates(path)
    if (!expected.includes(actual)) out.push(`repository ${path} is ${actual.slice(0, 7)}, expected ${expected.map((k) => k.slice(0, 7)).join(" or ")}`)
  }
  // (b) the lab is the repository under the rules, plus the files that never were in git
  const want = labOf(seen.remote)
  for (const path of new Set([...want.keys(), ...seen.lab.keys()])) {
    if (want.get(path) !== seen.lab.get(path)) out.push(`lab ${path} is ${brief(seen.lab.get(path))}, the repository makes it ${brief(want.get(path))}`)
  }
  // (c) no outside commit was pushed over
  const history = new Set(seen.history.map((c) => c.commit))
  for (const commit of model.outsideCommits) if (!history.has(commit)) out.push(`outside commit ${commit.slice(0, 7)} is gone from the history`)
  // (d) nothing pending, no error left
  if (seen.pendingCommits !== 0) out.push(`pendingCommits is ${seen.pendingCommits}`)
  if (seen.lastError !== null) out.push(`lastError is ${seen.lastError}`)
  return out
}

/** The service under test, as the steps drive it. */
export interface Driver {
  /** An API write; the actor its commit will name when it was acknowledged with a change to push. */
  readonly write: (path: string, content: string) => Promise<string | undefined>
  /** An API delete; the actor, or undefined when the file was not there (404). */
  readonly remove: (path: string) => Promise<string | undefined>
  /** A commit pushed by someone else; answers its id. */
  readonly outside: (edits: ReadonlyArray<readonly [string, Uint8Array | null]>) => Promise<string>
  readonly webhook: () => Promise<void>
  readonly forcedSync: (subPath: string | null) => Promise<void>
  /** Let the worker push what waits in the outbox. */
  readonly drain: () => Promise<void>
  /** The next git call (`down`: a fetch or push; the others: a push) fails; `pushLost`: after the branch moved. */
  readonly fault: (fault: Fault) => Promise<void>
  /** A pull that stops at its first blob read while `during` runs, then goes on. */
  readonly pausedPull: (during: () => Promise<void>) => Promise<void>
  /** A drain whose push (when there is one) stops before it reaches the host while `during` runs. */
  readonly pausedPush: (during: () => Promise<void>) => Promise<void>
  readonly restart: () => Promise<void>
  /** Exact runs: which of these actors' writes are in the repository now. */
  readonly landed: (actors: ReadonlyArray<string>) => Promise<ReadonlySet<string>>
  /** No more faults, the outbox drained, one last pull; then what a user sees. */
  readonly quiesce: () => Promise<Observed>
}

/** Play `steps`, quiesce, and answer the broken invariants (at each checkpoint step and at the end). */
export const play = async (model: SyncModel, driver: Driver, steps: ReadonlyArray<Step>, unique: boolean) => {
  const problems: Array<string> = []
  let writes = 0
  /** `fetched`: a paused step's writes waiting when it started, and the repository its push fetched. */
  const observe = async (fetched?: { readonly chunk: ReadonlyArray<Op>; readonly remote: ReadonlyMap<string, Uint8Array> }) => {
    const waiting = model.unlanded()
    if (!model.exact || waiting.length === 0) return
    const landed = await driver.landed(waiting.map((op) => op.actor))
    if (fetched !== undefined) model.landedAtFetch(fetched.chunk, fetched.remote, landed)
    model.land(landed)
  }
  const paused = async (run: (during: () => Promise<void>) => Promise<void>, during: ReadonlyArray<ApiStep | OutsideStep>) => {
    const fetched = { chunk: model.unlanded(), remote: new Map(model.remote) }
    await run(async () => {
      for (const inner of during) await (inner.kind === "outside" ? outside(inner) : api(inner))
    })
    await observe(fetched)
  }
  const outside = async (step: OutsideStep) => {
    const edits = step.edits.map(([path, content]) => [path, outsideBytes(content)] as const)
    model.pushedOutside(await driver.outside(edits), edits)
  }
  const api = async (step: ApiStep) => {
    const content = step.kind === "write" ? apiText(step.content, unique ? `#${++writes}` : undefined) : null
    const actor = content === null ? await driver.remove(step.path) : await driver.write(step.path, content)
    if (actor !== undefined) model.acked(step.path, content, actor)
  }
  const checkpoint = async (when: string) => {
    const seen = await driver.quiesce()
    await observe()
    problems.push(...violations(model, seen).map((p) => `${when}: ${p}`))
  }
  for (const [i, step] of steps.entries()) {
    switch (step.kind) {
      case "write":
      case "delete":
        await api(step)
        break
      case "outside":
        await outside(step)
        break
      case "webhook":
        await driver.webhook()
        break
      case "forcedSync":
        await driver.forcedSync(step.subPath)
        break
      case "drain":
        await driver.drain()
        break
      case "fault":
        await driver.fault(step.fault)
        break
      case "restart":
        await driver.restart()
        break
      case "pausedPull":
        await outside({ kind: "outside", edits: [[PULSE_PATH, { text: `pulse ${model.seq}\n` }]] })
        await paused(driver.pausedPull, step.during)
        break
      case "pausedPush":
        await paused(driver.pausedPush, step.during)
        break
      case "checkpoint":
        await checkpoint(`after step ${i}`)
        break
    }
    // only a job lands writes
    if (step.kind !== "write" && step.kind !== "delete" && step.kind !== "outside" && step.kind !== "fault") await observe()
  }
  await checkpoint("at the end")
  return problems
}
