import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Fiber, Scope, Stream } from "effect"
import * as LocalProcessProvider from "../../layers/pods/LocalProcessProvider.js"
import type { ProviderPod } from "../../src/pods/PodProvider.js"

const pod = (name: string): ProviderPod => ({ id: `pod_${name}`, labId: "lab_test", name, gpu: null, gpuCount: 0, providerRef: null })

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("LocalProcessProvider", () => {
  it.scopedLive("start spawns the command with the pod in its environment; watch sees running, then stopped after stop", () =>
    Effect.gen(function* () {
      const provider = yield* LocalProcessProvider.make({
        command: [process.execPath, "-e", "console.log(process.env.POD_ID, process.env.LAB_ID); setInterval(() => {}, 1000)"],
        stopGraceMillis: 1_000
      })
      const { ref } = yield* provider.start(pod("a"))
      const started = { ...pod("a"), providerRef: ref }
      expect(alive(Number(ref))).toBe(true)
      expect(yield* provider.status(started)).toEqual({ state: "running" })
      const observed = yield* Effect.fork(Stream.runCollect(provider.watch(started)))
      yield* Effect.sleep("100 millis")
      yield* provider.stop(started)
      expect(Chunk.toReadonlyArray(yield* Fiber.join(observed))).toEqual([
        { state: "running" },
        { state: "stopped" }
      ])
      expect(alive(Number(ref))).toBe(false)
      expect(yield* provider.status(started)).toEqual({ state: "stopped" })
      // stopping again, or a pod it never ran, succeeds
      yield* provider.stop(started)
      yield* provider.stop(pod("never"))
    })
  )

  it.scopedLive("a pod never sees the service's environment (its keys, its database): only its own variables and PATH", () =>
    Effect.gen(function* () {
      const secrets = { ADMIN_API_KEY: "lsk_admin_secret_for_the_test", SECRETS_MASTER_KEY: "ab".repeat(32), DATABASE_URL: "postgres://x" }
      Object.assign(process.env, secrets)
      yield* Effect.addFinalizer(() => Effect.sync(() => Object.keys(secrets).forEach((name) => delete process.env[name])))
      const asked = ["ADMIN_API_KEY", "SECRETS_MASTER_KEY", "DATABASE_URL", "PATH", "POD_ID", "LAB_ID"]
      const provider = yield* LocalProcessProvider.make({
        command: [process.execPath, "-e", `console.error(${JSON.stringify(asked)}.filter((n) => n in process.env).join(",")); process.exit(3)`]
      })
      const { ref } = yield* provider.start(pod("env"))
      const seen = yield* Stream.runCollect(provider.watch({ ...pod("env"), providerRef: ref }))
      const last = Chunk.toReadonlyArray(seen).at(-1)
      expect(last && last.state === "failed" ? last.message.split("\n").at(-1) : undefined).toBe("PATH,POD_ID,LAB_ID")
    })
  )

  it.scopedLive("a process that ends on its own is observed as failed with its exit code and last output", () =>
    Effect.gen(function* () {
      const provider = yield* LocalProcessProvider.make({
        command: [process.execPath, "-e", "console.error('disk full'); setTimeout(() => process.exit(7), 50)"]
      })
      const { ref } = yield* provider.start(pod("b"))
      const seen = yield* Stream.runCollect(provider.watch({ ...pod("b"), providerRef: ref }))
      const last = Chunk.toReadonlyArray(seen).at(-1)
      expect(last).toMatchObject({ state: "failed", exitCode: 7 })
      expect(last && last.state === "failed" ? last.message : "").toContain("disk full")
    })
  )

  it.live("a command that cannot run fails start with a PodProviderError", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const provider = yield* LocalProcessProvider.make({ command: ["/nonexistent/pod-command"] })
        const error = yield* Effect.flip(provider.start(pod("c")))
        expect(error._tag).toBe("PodProviderError")
        expect(error.message).toContain("cannot start /nonexistent/pod-command")
      })
    )
  )

  it.live("closing the layer's scope ends every process, SIGKILL after the grace period for one ignoring SIGTERM", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const provider = yield* Scope.extend(
        LocalProcessProvider.make({
          command: [process.execPath, "-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"],
          stopGraceMillis: 300
        }),
        scope
      )
      const refs = yield* Effect.all([provider.start(pod("d")), provider.start(pod("e"))])
      yield* Effect.sleep("200 millis")
      for (const { ref } of refs) expect(alive(Number(ref))).toBe(true)
      yield* Scope.close(scope, Exit.void)
      for (const { ref } of refs) expect(alive(Number(ref))).toBe(false)
    })
  )
})
