/**
 * Helpers for the end-to-end tests of experiments, pods and costs: a server
 * with two labs and keys of each kind, JSON calls, the activity feed, polling,
 * and OS process checks for pods run as local processes.
 */
import { expect } from "vitest"
import { Experiment } from "../../src/experiments/Experiment.js"
import { Pod, type PodStatus } from "../../src/pods/Pod.js"
import { data } from "./http.js"
import { type Fixture, waitFor } from "./LabFixture.js"

export * from "./LabFixture.js"

/** Does an OS process with this id exist? (signal 0 checks without sending anything) */
export const processExists = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "EPERM") return true
    return false
  }
}

export const pidOf = (pod: Pod): number => {
  expect(pod.providerRef).toMatch(/^\d+$/)
  return Number(pod.providerRef)
}

// --- pods and experiments

export const PODS = "/api/v1/pods"
export const EXPERIMENTS = "/api/v1/experiments"

export const createPod = async (fx: Fixture, body: Record<string, unknown> = {}, labId = fx.lab.id, token = fx.writer) =>
  data(await fx.post(PODS, { labId, name: "pod", costPerHour: 1.5, ...body }, token), Pod, 201)

export const getPod = async (fx: Fixture, id: string, labId = fx.lab.id) => data(await fx.get(`${PODS}/${id}`, { labId }), Pod)

export const waitForPod = (fx: Fixture, id: string, status: PodStatus, labId = fx.lab.id, timeoutMillis?: number) =>
  waitFor(`pod ${id} to be ${status}`, () => getPod(fx, id, labId), (p) => p.status === status, timeoutMillis)

export const startPod = async (fx: Fixture, id: string, labId = fx.lab.id) =>
  data(await fx.post(`${PODS}/${id}/start`, { labId }), Pod, 202)

export const stopPod = async (fx: Fixture, id: string, labId = fx.lab.id) => data(await fx.post(`${PODS}/${id}/stop`, { labId }), Pod, 202)

/** A pod that is running (started and observed). */
export const runningPod = async (fx: Fixture, body: Record<string, unknown> = {}) => {
  const pod = await createPod(fx, body)
  await startPod(fx, pod.id)
  return waitForPod(fx, pod.id, "running")
}

export const getExperiment = async (fx: Fixture, id: string, labId = fx.lab.id) =>
  data(await fx.get(`${EXPERIMENTS}/${id}`, { labId }), Experiment)

export const waitForExperiment = (fx: Fixture, id: string, done: (e: Experiment) => boolean, what: string) =>
  waitFor(`experiment ${id} ${what}`, () => getExperiment(fx, id), done)

