import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../layers/Database.js"
import { Activity } from "../../src/activity/Activity.js"
import { Pod } from "../../src/pods/Pod.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"
import {
  createPod,
  data,
  expectError,
  expectInvalid,
  findActivity,
  type Fixture,
  getPod,
  MISSING,
  page,
  pidOf,
  PODS,
  processExists,
  sleep,
  startFixture,
  useFixture,
  startPod,
  stopPod,
  waitFor,
  waitForPod,
  walk
} from "../support/ComputeSupport.js"

let fx: Fixture
useFixture(() => startFixture("pods"), (started) => (fx = started))

const waitGone = (pid: number) => waitFor(`process ${pid} to end`, async () => processExists(pid), (alive) => !alive)

describe("POST /api/v1/pods (extension) and GET /api/v1/pods", () => {
  it("creates a stopped pod (201) with server-owned fields, lists it newest first, and reads it back", async () => {
    const pod = await createPod(fx, { name: "trainer", gpu: "A100-80GB", costPerHour: 2.5 })
    expect(pod).toMatchObject({
      labId: fx.lab.id,
      name: "trainer",
      gpu: "A100-80GB",
      gpuCount: 1,
      costPerHour: 2.5,
      currency: "USD",
      provider: "local",
      providerRef: null,
      desiredStatus: "stopped",
      status: "stopped",
      exitCode: null,
      lastError: null,
      uptimeSeconds: 0,
      cost: 0,
      startedAt: null,
      stoppedAt: null
    })
    expect(pod.id).toMatch(/^pod_[0-9a-z]{16}$/)
    const cpu = await createPod(fx, { name: "cpu box", costPerHour: 0, currency: "EUR" })
    expect(cpu).toMatchObject({ gpu: null, gpuCount: 0, currency: "EUR" })

    expect(await getPod(fx, pod.id)).toEqual(pod)
    const listed = await page(await fx.get(PODS, { labId: fx.lab.id }), Pod)
    expect(listed.data.map((p) => p.id).slice(0, 2)).toEqual([cpu.id, pod.id])
    const all = await walk(fx, PODS, { labId: fx.lab.slug }, Pod, 1)
    expect(all.map((p) => p.id)).toContain(pod.id)
    const stopped = await page(await fx.get(PODS, { labId: fx.lab.id, status: "stopped" }), Pod)
    expect(stopped.data.every((p) => p.status === "stopped")).toBe(true)
    const running = await page(await fx.get(PODS, { labId: fx.lab.id, status: "running" }), Pod)
    expect(running.data.map((p) => p.id)).not.toContain(pod.id)

    const entry = findActivity(await fx.activity(), "pod.created", pod.id)
    expect(entry).toMatchObject({ actor: fx.writerId, data: { gpu: "A100-80GB", costPerHour: 2.5, currency: "USD" } })
  })

  it("422: unknown and server-owned fields, missing and bad values, naming the field", async () => {
    const ok = { labId: fx.lab.id, name: "x", costPerHour: 1 }
    await expectInvalid(await fx.post(PODS, { ...ok, colour: "red" }), "colour is not a known field")
    await expectInvalid(await fx.post(PODS, { ...ok, status: "running" }), "status is not a known field")
    await expectInvalid(await fx.post(PODS, { ...ok, uptimeSeconds: 5 }), "uptimeSeconds is not a known field")
    await expectInvalid(await fx.post(PODS, { ...ok, providerRef: "1" }), "providerRef is not a known field")
    await expectInvalid(await fx.post(PODS, { labId: fx.lab.id, name: "x" }), "costPerHour is required")
    await expectInvalid(await fx.post(PODS, { ...ok, costPerHour: -1 }), "costPerHour")
    await expectInvalid(await fx.post(PODS, { ...ok, costPerHour: "1" }), "costPerHour")
    await expectInvalid(await fx.post(PODS, { ...ok, currency: "usd" }), "currency")
    await expectInvalid(await fx.post(PODS, { ...ok, gpuCount: 1000 }), "gpuCount")
    await expectInvalid(await fx.post(PODS, { ...ok, gpuCount: 1.5 }), "gpuCount")
    await expectInvalid(await fx.post(PODS, { ...ok, name: "  " }), "name")
    await expectInvalid(await fx.post(PODS, { ...ok, name: "n".repeat(201) }), "name")
    await expectInvalid(await fx.post(PODS, { ...ok, gpu: "g".repeat(101) }), "gpu")
    await expectInvalid(await fx.get(PODS, { labId: fx.lab.id, status: "sleeping" }), "status")
    await expectInvalid(await fx.get(PODS, { labId: fx.lab.id, limit: 101 }), "limit")
  })

  it("403 for a foreign lab and a read-only key writing; 404 for the operator naming a missing lab", async () => {
    await expectError(await fx.get(PODS, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.post(PODS, { labId: fx.lab.id, name: "x", costPerHour: 1 }, fx.stranger), 403, "forbidden")
    await expectError(await fx.post(PODS, { labId: fx.lab.id, name: "x", costPerHour: 1 }, fx.reader), 403, "forbidden")
    await page(await fx.get(PODS, { labId: fx.lab.id }, fx.reader), Pod)
    await expectError(await fx.get(PODS, { labId: "no-such-lab" }, fx.admin), 404, "not_found")
    await expectError(await fx.post(PODS, { labId: "no-such-lab", name: "x", costPerHour: 1 }, fx.admin), 404, "not_found")
  })
})

describe("start and stop: real local processes", () => {
  it("start is 202 starting, the process runs; stop is 202 stopping, the process ends; both are safe to repeat", async () => {
    const pod = await createPod(fx, { name: "worker", costPerHour: 36 })
    const starting = await startPod(fx, pod.id)
    expect(starting).toMatchObject({ status: "starting", desiredStatus: "running" })

    const running = await waitForPod(fx, pod.id, "running")
    const pid = pidOf(running)
    expect(processExists(pid)).toBe(true)
    expect(running.startedAt).not.toBeNull()

    // again: 202 with where it is, the same process
    const again = await startPod(fx, pod.id)
    expect(again).toMatchObject({ status: "running", desiredStatus: "running", providerRef: String(pid) })

    await sleep(300)
    const later = await getPod(fx, pod.id)
    expect(later.uptimeSeconds).toBeGreaterThan(0.2)
    expect(later.cost).toBeCloseTo((later.uptimeSeconds / 3600) * 36, 4)

    const stopping = await stopPod(fx, pod.id)
    expect(stopping).toMatchObject({ status: "stopping", desiredStatus: "stopped" })
    const stopped = await waitForPod(fx, pod.id, "stopped")
    await waitGone(pid)
    expect(stopped.startedAt).toBeNull()
    expect(stopped.stoppedAt).not.toBeNull()
    expect(stopped.exitCode).toBeNull()

    // again: 202 stopped; uptime no longer grows
    expect(await stopPod(fx, pod.id)).toMatchObject({ status: "stopped", desiredStatus: "stopped" })
    await sleep(100)
    expect((await getPod(fx, pod.id)).uptimeSeconds).toBe(stopped.uptimeSeconds)

    const entries = await fx.activity()
    expect(findActivity(entries, "pod.start", pod.id)).toMatchObject({ actor: fx.writerId, data: { from: "stopped" } })
    expect(findActivity(entries, "pod.running", pod.id).data).toMatchObject({ provider: "local", providerRef: String(pid) })
    expect(findActivity(entries, "pod.stop", pod.id)).toMatchObject({ actor: fx.writerId, data: { from: "running" } })
    findActivity(entries, "pod.stopped", pod.id)
    expect(entries.filter((e) => e.ref === pod.id && e.kind === "pod.start")).toHaveLength(1)
  })

  it("uptime is the total over sessions: a second run adds to the first", async () => {
    const pod = await createPod(fx, { name: "sessions", costPerHour: 3600 })
    await startPod(fx, pod.id)
    const first = await waitForPod(fx, pod.id, "running")
    await sleep(250)
    await stopPod(fx, pod.id)
    const afterFirst = await waitForPod(fx, pod.id, "stopped")
    await waitGone(pidOf(first))
    expect(afterFirst.uptimeSeconds).toBeGreaterThan(0.2)

    await startPod(fx, pod.id)
    const second = await waitForPod(fx, pod.id, "running")
    expect(second.providerRef).not.toBe(first.providerRef)
    await sleep(250)
    await stopPod(fx, pod.id)
    const afterSecond = await waitForPod(fx, pod.id, "stopped")
    expect(afterSecond.uptimeSeconds).toBeGreaterThan(afterFirst.uptimeSeconds + 0.2)
    // cost = uptime × rate (3600/h = 1 per second)
    expect(afterSecond.cost).toBeCloseTo(afterSecond.uptimeSeconds, 2)
  })

  it("a process that ends on its own makes the pod failed with its exit code; start retries, stop acknowledges", async () => {
    const pod = await createPod(fx, { name: "fragile" })
    await startPod(fx, pod.id)
    const running = await waitForPod(fx, pod.id, "running")
    process.kill(pidOf(running), "SIGKILL")
    const failed = await waitForPod(fx, pod.id, "failed")
    expect(failed).toMatchObject({ exitCode: 137, desiredStatus: "running" })
    expect(failed.lastError).toContain("SIGKILL")
    expect(failed.startedAt).toBeNull()
    expect(findActivity(await fx.activity(), "pod.failed", pod.id)).toMatchObject({ actor: "pod-provider", data: { exitCode: 137 } })

    // start from failed: a new process
    expect(await startPod(fx, pod.id)).toMatchObject({ status: "starting", exitCode: null, lastError: null })
    const retried = await waitForPod(fx, pod.id, "running")
    expect(processExists(pidOf(retried))).toBe(true)
    process.kill(pidOf(retried), "SIGTERM")
    await waitForPod(fx, pod.id, "failed")

    // stop on failed: stopped, desired stopped
    expect(await stopPod(fx, pod.id)).toMatchObject({ status: "stopped", desiredStatus: "stopped" })
  })

  it("desired status: start while stopping runs it again after the stop; stop while starting leaves no process", async () => {
    const pod = await createPod(fx, { name: "flappy" })
    await startPod(fx, pod.id)
    const first = await waitForPod(fx, pod.id, "running")
    expect(await stopPod(fx, pod.id)).toMatchObject({ status: "stopping" })
    const restart = await startPod(fx, pod.id)
    expect(restart.desiredStatus).toBe("running")
    expect(["stopping", "stopped", "starting", "running"]).toContain(restart.status)
    const second = await waitFor(
      "a new process",
      () => getPod(fx, pod.id),
      (p) => p.status === "running" && p.providerRef !== first.providerRef
    )
    await waitGone(pidOf(first))
    expect(processExists(pidOf(second))).toBe(true)

    await stopPod(fx, pod.id)
    await waitForPod(fx, pod.id, "stopped")
    await waitGone(pidOf(second))

    // stop right after start
    expect(await startPod(fx, pod.id)).toMatchObject({ status: "starting" })
    expect(await stopPod(fx, pod.id)).toMatchObject({ status: "stopping", desiredStatus: "stopped" })
    const final = await waitForPod(fx, pod.id, "stopped")
    if (final.providerRef !== second.providerRef && final.providerRef !== null) await waitGone(pidOf(final))
    await sleep(200)
    expect((await getPod(fx, pod.id)).status).toBe("stopped")
  })

  it("404 for a pod that is not in the lab; 403 for a foreign lab or a read-only key; 422 for unknown fields", async () => {
    const pod = await createPod(fx, { name: "guarded" })
    for (const action of ["start", "stop"]) {
      await expectError(await fx.post(`${PODS}/${MISSING}/${action}`, { labId: fx.lab.id }), 404, "not_found")
      await expectError(await fx.post(`${PODS}/${pod.id}/${action}`, { labId: fx.other.id }, fx.stranger), 404, "not_found")
      await expectError(await fx.post(`${PODS}/${pod.id}/${action}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
      await expectError(await fx.post(`${PODS}/${pod.id}/${action}`, { labId: fx.lab.id }, fx.reader), 403, "forbidden")
      await expectInvalid(await fx.post(`${PODS}/${pod.id}/${action}`, { labId: fx.lab.id, force: true }), "force is not a known field")
      await expectInvalid(await fx.post(`${PODS}/${pod.id}/${action}`, {}), "labId is required")
      await expectError(await fx.post(`${PODS}/${pod.id}/${action}`, { labId: "no-such-lab" }, fx.admin), 404, "not_found")
    }
    await expectError(await fx.get(`${PODS}/${MISSING}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.get(`${PODS}/${pod.id}`, { labId: fx.other.id }, fx.stranger), 404, "not_found")
    await expectError(await fx.get(`${PODS}/${pod.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await data(await fx.get(`${PODS}/${pod.id}`, { labId: fx.lab.id }, fx.reader), Pod)
    await expectInvalid(await fx.get(`${PODS}/${pod.id}`, {}), "labId")
    expect((await getPod(fx, pod.id)).status).toBe("stopped")
  })
})

describe("DELETE /api/v1/pods/{podId} (extension)", () => {
  it("409 while the pod runs; deletes a stopped pod (200) with an activity entry, then 404", async () => {
    const pod = await createPod(fx, { name: "doomed", costPerHour: 3600 })
    await startPod(fx, pod.id)
    const running = await waitForPod(fx, pod.id, "running")
    const message = await expectError(await fx.del(`${PODS}/${pod.id}`, { labId: fx.lab.id }), 409, "conflict")
    expect(message).toContain("running")
    await stopPod(fx, pod.id)
    await waitForPod(fx, pod.id, "stopped")
    await waitGone(pidOf(running))

    await expectError(await fx.del(`${PODS}/${pod.id}`, { labId: fx.lab.id }, fx.reader), 403, "forbidden")
    await expectError(await fx.del(`${PODS}/${pod.id}`, { labId: fx.lab.id }, fx.stranger), 403, "forbidden")
    await expectError(await fx.del(`${PODS}/${pod.id}`, { labId: fx.other.id }, fx.stranger), 404, "not_found")
    const deleted = await data(await fx.del(`${PODS}/${pod.id}`, { labId: fx.lab.id }), Pod)
    expect(deleted).toMatchObject({ id: pod.id, status: "stopped" })
    expect(deleted.uptimeSeconds).toBeGreaterThan(0)

    await expectError(await fx.get(`${PODS}/${pod.id}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.del(`${PODS}/${pod.id}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.del(`${PODS}/${MISSING}`, { labId: fx.lab.id }), 404, "not_found")
    await expectError(await fx.post(`${PODS}/${pod.id}/start`, { labId: fx.lab.id }), 404, "not_found")
    expect(findActivity(await fx.activity(), "pod.deleted", pod.id)).toMatchObject({
      actor: fx.writerId,
      data: { uptimeSeconds: deleted.uptimeSeconds, currency: "USD" }
    })
  })
})

describe("pod commands that crash or ignore SIGTERM, and shutdown", () => {
  // pods named crash-* print and exit with 3; stubborn-* ignore SIGTERM; others run until stopped
  const script =
    "const name = process.env.POD_NAME ?? '';" +
    " if (name.startsWith('crash')) { console.error('boom: out of memory'); setTimeout(() => process.exit(3), 100) }" +
    " else { if (name.startsWith('stubborn')) process.on('SIGTERM', () => console.log('ignoring SIGTERM'));" +
    " setInterval(() => console.log('heartbeat'), 1000) }"
  let cmd: Fixture
  beforeAll(async () => {
    cmd = await startFixture("pods-cmd", { pods: { command: [process.execPath, "-e", script], stopGraceMillis: 1_500 } })
  })
  afterAll(() => cmd.close())

  it("a process that exits with a code makes the pod failed with that code and its last output", async () => {
    const crash = await createPod(cmd, { name: "crash-1" })
    await startPod(cmd, crash.id)
    const failed = await waitForPod(cmd, crash.id, "failed")
    expect(failed.exitCode).toBe(3)
    expect(failed.lastError).toContain("code 3")
    expect(failed.lastError).toContain("boom: out of memory")
    expect(findActivity(await cmd.activity(), "pod.failed", crash.id).data).toMatchObject({ exitCode: 3 })
  })

  it("stop sends SIGTERM, then SIGKILL after the grace period; the pod is stopping meanwhile and cannot be deleted (409)", async () => {
    const pod = await createPod(cmd, { name: "stubborn-1" })
    await startPod(cmd, pod.id)
    const running = await waitForPod(cmd, pod.id, "running")
    const pid = pidOf(running)
    await sleep(200) // let it install its SIGTERM handler
    const began = Date.now()
    expect(await stopPod(cmd, pod.id)).toMatchObject({ status: "stopping" })
    await sleep(300)
    expect(processExists(pid)).toBe(true)
    expect((await getPod(cmd, pod.id)).status).toBe("stopping")
    expect(await expectError(await cmd.del(`${PODS}/${pod.id}`, { labId: cmd.lab.id }), 409, "conflict")).toContain("stopping")
    // stop again while stopping: 202, still stopping
    expect(await stopPod(cmd, pod.id)).toMatchObject({ status: "stopping" })
    const stopped = await waitForPod(cmd, pod.id, "stopped")
    expect(Date.now() - began).toBeGreaterThanOrEqual(1_400)
    expect(stopped.exitCode).toBeNull()
    expect(processExists(pid)).toBe(false)
    await data(await cmd.del(`${PODS}/${pod.id}`, { labId: cmd.lab.id }), Pod)
  })

  it("shutting the service down ends the processes of running pods", async () => {
    const steady = await createPod(cmd, { name: "steady" })
    await startPod(cmd, steady.id)
    const pid = pidOf(await waitForPod(cmd, steady.id, "running"))
    expect(processExists(pid)).toBe(true)
    await cmd.close()
    expect(processExists(pid)).toBe(false)
  })
})

describe("restarts: desired status survives, a crash is not billed", () => {
  it("pods wanted running start again after a restart; a session left open by a crash ends at the last heartbeat", async () => {
    const dir = await mkdtemp(join(tmpdir(), "pods-restart-"))
    const database = { kind: "pglite" as const, dataDir: dir }
    const first = await startFixture("pods-restart", { database })
    let second: TestServer | undefined
    try {
      const kept = await createPod(first, { name: "kept", costPerHour: 3600 })
      const crashed = await createPod(first, { name: "crashed", costPerHour: 3600 })
      const idle = await createPod(first, { name: "idle" })
      await startPod(first, kept.id)
      const before = pidOf(await waitForPod(first, kept.id, "running"))
      await first.close()
      expect(processExists(before)).toBe(false)

      // play a crash: the service died while `crashed` ran; it was last seen 10 minutes ago, its session began an hour ago
      const now = Date.now()
      await Effect.runPromise(
        Effect.scoped(
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            Effect.all([
              sql`UPDATE pods SET status = 'running', desired_status = 'running', provider_ref = '999999999',
                  last_seen_at = ${new Date(now - 600_000)} WHERE id = ${crashed.id}`,
              sql`INSERT INTO pod_sessions ${sql.insert({
                id: "psess_crashed",
                labId: first.lab.id,
                podId: crashed.id,
                podName: "crashed",
                costPerHour: 3600,
                currency: "USD",
                startedAt: new Date(now - 3_600_000),
                stoppedAt: null,
                createdAt: new Date(now - 3_600_000)
              })}`
            ])
          ).pipe(Effect.provide(Layer.orDie(Database.layer(database))))
        )
      )

      second = await startTestServer({ database })
      const server = second
      const read = async (id: string) => data(await server.request("GET", `${PODS}/${id}?labId=${first.lab.id}`, { token: first.writer }), Pod)
      const wait = (id: string) => waitFor(`${id} to run again`, () => read(id), (p) => p.status === "running")

      const again = await wait(kept.id)
      expect(again.desiredStatus).toBe("running")
      expect(pidOf(again)).not.toBe(before)
      expect(processExists(pidOf(again))).toBe(true)

      const recovered = await wait(crashed.id)
      expect(processExists(pidOf(recovered))).toBe(true)
      // the crashed session counts 50 minutes (to the last heartbeat), not the hour up to the restart
      expect(recovered.uptimeSeconds).toBeGreaterThan(2_990)
      expect(recovered.uptimeSeconds).toBeLessThan(3_100)

      expect((await read(idle.id)).status).toBe("stopped")
      const activity = await page(
        await server.request("GET", `/api/v1/activity?labId=${first.lab.id}&limit=100`, { token: first.writer }),
        Activity
      )
      const notes = activity.data.filter((e) => e.ref === crashed.id).map((e) => e.message)
      expect(notes.some((m) => m.includes("was not running when the service started again"))).toBe(true)
      expect(notes.some((m) => m.includes("it is wanted running"))).toBe(true)

      await server.close()
      expect(processExists(pidOf(again))).toBe(false)
      expect(processExists(pidOf(recovered))).toBe(false)
    } finally {
      await first.close().catch(() => undefined)
      await second?.close().catch(() => undefined)
      await rm(dir, { recursive: true, force: true })
    }
  })
})
