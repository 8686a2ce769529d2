import { Deferred, Duration, Effect, Exit, Layer, Option, Stream } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { constants } from "node:os"
import {
  type Observed,
  PodProvider,
  PodProviderError,
  type PodProviderShape,
  type ProviderPod
} from "../../src/pods/PodProvider.js"

export interface LocalProcessOptions {
  /** The program and its arguments; every pod runs one process of it. */
  readonly command: ReadonlyArray<string>
  /** How long a stop waits after SIGTERM before SIGKILL. Default 5 s. */
  readonly stopGraceMillis?: number | undefined
  /** Working directory of the processes. Default: this process's. */
  readonly cwd?: string | undefined
}

/** The default pod: a long-running node process that prints a heartbeat every second. */
export const DEFAULT_COMMAND: ReadonlyArray<string> = [
  process.execPath,
  "-e",
  "const id = process.env.POD_ID; console.log(`pod ${id} up`); " +
    "setInterval(() => console.log(`heartbeat ${id} ${new Date().toISOString()}`), 1000)"
]

const TAIL_LINES = 20

interface ExitInfo {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

interface Proc {
  readonly child: ChildProcess
  readonly exited: Deferred.Deferred<ExitInfo>
  /** Set by `stop`: the exit that follows is a stop, not a failure. */
  stopRequested: boolean
  /** The last lines of output, for the failure message. */
  readonly tail: Array<string>
}

const exitCodeOf = (info: ExitInfo): number | null => {
  if (info.code !== null) return info.code
  if (info.signal === null) return null
  const n = constants.signals[info.signal]
  return typeof n === "number" ? 128 + n : null
}

const observedAfterExit = (proc: Proc, info: ExitInfo): Observed => {
  if (proc.stopRequested) return { state: "stopped" }
  const exitCode = exitCodeOf(info)
  const how = info.signal !== null ? `was killed by ${info.signal}` : `exited on its own with code ${info.code ?? "?"}`
  const tail = proc.tail.slice(-5).join("\n")
  return { state: "failed", exitCode, message: tail ? `the process ${how}; last output:\n${tail}` : `the process ${how}` }
}

/** What a pod inherits from the service's environment: where programs are and the locale, nothing else. */
const podBaseEnvironment = (): Record<string, string> => {
  const kept: Record<string, string> = {}
  for (const name of ["PATH", "LANG", "LC_ALL", "TZ", "TMPDIR"]) {
    const value = process.env[name]
    if (value !== undefined) kept[name] = value
  }
  return kept
}

/** The running pods by reference (the pid), with what spawning them needs. */
interface Processes {
  readonly program: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string | undefined
  readonly procs: Map<string, Proc>
}

/** Keeps the last TAIL_LINES non-blank lines of a process's output, each cut at 500 characters. */
const keepTail = (proc: Proc) => (chunk: Buffer) => {
  for (const line of chunk.toString("utf8").split("\n")) {
    if (line.trim() === "") continue
    proc.tail.push(line.slice(0, 500))
    if (proc.tail.length > TAIL_LINES) proc.tail.shift()
  }
}

/** Spawn a pod's process; its reference (the pid) once it runs, or why it cannot. */
const start = (processes: Processes, pod: ProviderPod) =>
  Effect.gen(function* () {
    const { program, args, procs } = processes
    const exited = yield* Deferred.make<ExitInfo>()
    return yield* Effect.async<{ readonly ref: string }, PodProviderError>((resume) => {
      const child = spawn(program, args, {
        cwd: processes.cwd,
        stdio: ["ignore", "pipe", "pipe"],
        // the pod's own environment only: never the service's (its admin key, master key, database URL)
        env: {
          ...podBaseEnvironment(),
          POD_ID: pod.id,
          POD_NAME: pod.name,
          LAB_ID: pod.labId,
          POD_GPU: pod.gpu ?? "",
          POD_GPU_COUNT: String(pod.gpuCount)
        }
      })
      const proc: Proc = { child, exited, stopRequested: false, tail: [] }
      child.stdout?.on("data", keepTail(proc))
      child.stderr?.on("data", keepTail(proc))
      child.once("spawn", () => {
        const ref = String(child.pid)
        procs.set(ref, proc)
        child.once("exit", (code, signal) => {
          procs.delete(ref)
          Deferred.unsafeDone(exited, Exit.succeed({ code, signal }))
        })
        resume(Effect.succeed({ ref }))
      })
      child.once("error", (error) => {
        // before spawn: the command cannot run at all (ENOENT, EACCES)
        if (child.pid === undefined) {
          resume(Effect.fail(new PodProviderError({ message: `cannot start ${program}: ${error.message}` })))
        }
      })
    })
  }).pipe(Effect.uninterruptible)

/** Wait for the exit at most `limit`; interruptible inside, so the timeout can cut it short. */
const awaitExit = (proc: Proc, limit: Duration.Duration) =>
  Effect.interruptible(Deferred.await(proc.exited)).pipe(Effect.timeoutOption(limit))

/** SIGTERM, then SIGKILL after the grace period. Not interruptible: a stop always finishes. */
const terminate = (grace: Duration.Duration) => (proc: Proc) =>
  Effect.gen(function* () {
    proc.stopRequested = true
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) return
    proc.child.kill("SIGTERM")
    if (Option.isSome(yield* awaitExit(proc, grace))) return
    proc.child.kill("SIGKILL")
    yield* awaitExit(proc, Duration.seconds(5))
  }).pipe(Effect.uninterruptible)

const find = (processes: Processes, pod: ProviderPod): Proc | undefined =>
  pod.providerRef === null ? undefined : processes.procs.get(pod.providerRef)

/** Running until the process exits, then stopped (a stop asked for) or failed (with its exit code and last output). */
const watch = (processes: Processes, pod: ProviderPod): Stream.Stream<Observed> =>
  Stream.suspend(() => {
    const proc = find(processes, pod)
    const stopped: Observed = { state: "stopped" }
    if (!proc) return Stream.succeed(stopped)
    const running: Observed = { state: "running" }
    return Stream.concat(
      Stream.succeed(running),
      Stream.fromEffect(Effect.map(Deferred.await(proc.exited), (info) => observedAfterExit(proc, info)))
    )
  })

/**
 * Pods as real local processes: start spawns the configured command (with
 * POD_ID, POD_NAME, LAB_ID, POD_GPU and POD_GPU_COUNT in its environment, and of
 * the service's only PATH, LANG, LC_ALL, TZ and TMPDIR), stop
 * sends SIGTERM and, after the grace period, SIGKILL. A process that ends
 * without being stopped is observed as `failed` with its exit code (128 + the
 * signal number when killed by a signal). Processes die with the service: the
 * layer's finalizer stops any still running.
 */
export const make = (options: LocalProcessOptions) =>
  Effect.gen(function* () {
    const [program, ...args] = options.command
    if (program === undefined || program === "") return yield* Effect.dieMessage("the pod command is empty")
    const grace = Duration.millis(options.stopGraceMillis ?? 5_000)
    const processes: Processes = { program, args, cwd: options.cwd, procs: new Map() }
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...processes.procs.values()], terminate(grace), { concurrency: "unbounded", discard: true })
    )
    const provider: PodProviderShape = {
      name: "local",
      ephemeral: true,
      start: (pod) => start(processes, pod),
      stop: (pod) =>
        Effect.suspend(() => {
          const proc = find(processes, pod)
          return proc ? terminate(grace)(proc) : Effect.void
        }),
      status: (pod) => Effect.sync(() => (find(processes, pod) ? { state: "running" } : { state: "stopped" })),
      watch: (pod) => watch(processes, pod),
      remove: () => Effect.void
    }
    return provider
  })

export const layer = (options: LocalProcessOptions) => Layer.scoped(PodProvider, make(options))
