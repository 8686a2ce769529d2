import { Effect } from "effect"
import { type Git, GitError } from "../../src/sync/Git.js"

type GitService = typeof Git.Service

/** A fault of the next push: it fails before reaching the host, or lands and then its answer is lost (a crash). */
export type PushFault = "pushFails" | "pushLost"

export interface ReadBlobPause {
  /** Resolves once a pull waits at its first blob read. */
  readonly reached: Promise<void>
  /** Let it go on; when it was never reached, the pause is withdrawn. */
  readonly release: () => void
}

/**
 * Controls around a lab's git (the model-based test's faults): the next push fails or loses its answer, the next
 * blob read stops until released. Wrap a Git service with `wrap`.
 */
export const gitControls = () => {
  let pushFault: PushFault | undefined
  let pause: { readonly reachedNow: () => void; readonly released: Promise<void> } | undefined

  const armPush = (fault: PushFault) => {
    pushFault = fault
  }

  const pauseAtReadBlob = (): ReadBlobPause => {
    let reachedNow = () => {}
    const reached = new Promise<void>((resolve) => (reachedNow = resolve))
    let releaseNow = () => {}
    const released = new Promise<void>((resolve) => (releaseNow = resolve))
    const armed = { reachedNow, released }
    pause = armed
    return {
      reached,
      release: () => {
        if (pause === armed) pause = undefined
        releaseNow()
      }
    }
  }

  const reset = () => {
    pushFault = undefined
    pause = undefined
  }

  const gate = Effect.promise(async () => {
    const armed = pause
    if (armed === undefined) return
    pause = undefined
    armed.reachedNow()
    await armed.released
  })

  const wrap = (git: GitService): GitService => ({
    ...git,
    readBlob: (labId, oid, maxBytes) => Effect.zipRight(gate, git.readBlob(labId, oid, maxBytes)),
    push: (labId, remote, commit, expected) =>
      Effect.suspend(() => {
        const fault = pushFault
        pushFault = undefined
        if (fault === "pushFails") return Effect.fail(new GitError({ message: "push: connection reset (simulated)" }))
        const pushed = git.push(labId, remote, commit, expected)
        return fault === "pushLost"
          ? Effect.zipRight(pushed, Effect.fail(new GitError({ message: "push: answer lost (simulated)" })))
          : pushed
      })
  })

  return { armPush, pauseAtReadBlob, reset, wrap }
}
