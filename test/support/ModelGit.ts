import { Effect } from "effect"
import { type Git, GitError } from "../../src/sync/Git.js"

type GitService = typeof Git.Service

/** A fault of the next push: it fails before reaching the host, or lands and then its answer is lost (a crash). */
export type PushFault = "pushFails" | "pushLost"

/** Where the lab's git work can be stopped: the next blob read (a pull), the next push. */
export type Moment = "readBlob" | "push"

export interface Pause {
  /** Resolves once the git work waits at the moment. */
  readonly reached: Promise<void>
  /** Let it go on; when it was never reached, the pause is withdrawn. */
  readonly release: () => void
}

/**
 * Controls around a lab's git (the model-based test's faults): the next push fails or loses its answer, the next
 * blob read or push stops until released. Wrap a Git service with `wrap`.
 */
export const gitControls = () => {
  let pushFault: PushFault | undefined
  const pauses = new Map<Moment, { readonly reachedNow: () => void; readonly released: Promise<void> }>()
  /** How often each fault and pause took effect (a test prints them: the runs did reach the races). */
  const stats = { readBlobPauses: 0, pushPauses: 0, pushesFailed: 0, answersLost: 0 }

  const armPush = (fault: PushFault) => {
    pushFault = fault
  }

  const pauseAt = (moment: Moment): Pause => {
    let reachedNow = () => {}
    const reached = new Promise<void>((resolve) => (reachedNow = resolve))
    let releaseNow = () => {}
    const released = new Promise<void>((resolve) => (releaseNow = resolve))
    const armed = { reachedNow, released }
    pauses.set(moment, armed)
    return {
      reached,
      release: () => {
        if (pauses.get(moment) === armed) pauses.delete(moment)
        releaseNow()
      }
    }
  }

  const reset = () => {
    pushFault = undefined
    pauses.clear()
  }

  const gate = (moment: Moment) =>
    Effect.promise(async () => {
      const armed = pauses.get(moment)
      if (armed === undefined) return
      pauses.delete(moment)
      if (moment === "readBlob") stats.readBlobPauses++
      else stats.pushPauses++
      armed.reachedNow()
      await armed.released
    })

  /** Starts `work` with the git stopped at `moment`, runs `during` there (or once `work` ended without reaching it), then lets `work` finish. */
  const pausedDuring = async (moment: Moment, work: () => Promise<unknown>, during: () => Promise<void>) => {
    const pause = pauseAt(moment)
    const working = work()
    await Promise.race([pause.reached, working])
    await during()
    pause.release()
    await working
  }

  const wrap = (git: GitService): GitService => ({
    ...git,
    readBlob: (labId, oid, maxBytes) => Effect.zipRight(gate("readBlob"), git.readBlob(labId, oid, maxBytes)),
    push: (labId, remote, commit, expected) =>
      Effect.zipRight(gate("push"), Effect.suspend(() => {
        const fault = pushFault
        pushFault = undefined
        if (fault === "pushFails") stats.pushesFailed++
        if (fault === "pushLost") stats.answersLost++
        if (fault === "pushFails") return Effect.fail(new GitError({ message: "push: connection reset (simulated)" }))
        const pushed = git.push(labId, remote, commit, expected)
        return fault === "pushLost"
          ? Effect.zipRight(pushed, Effect.fail(new GitError({ message: "push: answer lost (simulated)" })))
          : pushed
      }))
  })

  return { armPush, pauseAt, pausedDuring, reset, wrap, stats }
}
