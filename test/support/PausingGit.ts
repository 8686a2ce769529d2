import { Effect, Layer } from "effect"
import { Git } from "../../src/sync/Git.js"

/** A moment of a lab's git work where a test can stop it, act, and let it go on. */
export type Moment = "readBlob" | "push"

export interface Pause {
  /** Resolves once the git work has reached the moment and waits there. */
  readonly reached: Promise<void>
  readonly release: () => void
}

/**
 * A Git layer around another that stops at a chosen moment (the next blob a
 * pull reads, the next push) until the test releases it: races made
 * deterministic instead of left to chance. Use as
 * `startTestServer({ git: { kind: "layer", layer: pausing.layer } })`.
 */
export const pausingGit = (inner: Layer.Layer<Git>) => {
  const armed = new Map<Moment, { skip: number; readonly reachedNow: () => void; readonly released: Promise<void> }>()

  /** Stop at the next `moment`, or after letting `skip` of them pass (the 251st blob a pull reads: `skip` 250). */
  const pauseAt = (moment: Moment, skip = 0): Pause => {
    let reachedNow = () => {}
    const reached = new Promise<void>((resolve) => (reachedNow = resolve))
    let release = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    armed.set(moment, { skip, reachedNow, released })
    return { reached, release }
  }

  const gate = (moment: Moment) =>
    Effect.promise(async () => {
      const pause = armed.get(moment)
      if (pause === undefined) return
      if (pause.skip > 0) {
        pause.skip--
        return
      }
      armed.delete(moment)
      pause.reachedNow()
      await pause.released
    })

  const layer = Layer.effect(
    Git,
    Effect.map(Git, (git) =>
      Git.of({
        ...git,
        readBlob: (labId, oid, maxBytes) => Effect.zipRight(gate("readBlob"), git.readBlob(labId, oid, maxBytes)),
        push: (labId, remote, commit, expected) => Effect.zipRight(gate("push"), git.push(labId, remote, commit, expected))
      })
    )
  ).pipe(Layer.provide(inner))

  return { layer, pauseAt }
}
