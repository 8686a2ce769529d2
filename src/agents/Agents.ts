import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps, type ResourceDeps, resourceReads } from "../activity/ResourceService.js"
import { applyPatch, type LifecycleLog, removeLogged, storeChange } from "../activity/Changes.js"
import { InvalidField, orNotFound, StateConflict } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { transition } from "../common/StateMachine.js"
import { isUniqueViolation } from "../db/SqlErrors.js"
import type { LabId } from "../labs/LabId.js"
import { type Agent, AgentId, AgentLifecycle, type AgentStatus, type CreateAgent, type UpdateAgent } from "./Agent.js"
import { AgentsRepo } from "./AgentsRepo.js"
import { inTransaction } from "../db/Transaction.js"

/** Clock skew tolerated on a lastActiveAt sent by a client. */
const SKEW_MILLIS = 60_000

/** Status changes are logged as agent.activated, agent.idled, agent.paused, agent.retired. */
const LOG: LifecycleLog<AgentStatus> = {
  kind: "agent",
  label: "Agent",
  verbs: { active: "activated", idle: "idled", paused: "paused", retired: "retired" }
}

const FIELDS = ["name", "role", "model", "status", "lastActiveAt"] as const

const RESOURCE = "agent"

type Deps = ResourceDeps<AgentsRepo>

const nameTaken = (repo: AgentsRepo, labId: LabId, name: string, self?: string) =>
  Effect.flatMap(repo.findByName(labId, name), (found) =>
    Option.isSome(found) && found.value.id !== self
      ? Effect.fail(
          new StateConflict({
            resource: RESOURCE,
            id: found.value.id,
            problem: `the lab has an agent named ${found.value.name} already: ${found.value.id}`
          })
        )
      : Effect.void
  )

const uniqueName = (name: string) => (error: unknown) =>
  isUniqueViolation(error)
    ? Effect.fail(new StateConflict({ resource: RESOURCE, id: name, problem: `the lab has an agent named ${name} already` }))
    : Effect.die(error)

const create = ({ sql, repo, activity }: Deps, labId: LabId, input: Omit<CreateAgent, "labId">, actor: string) =>
  Effect.gen(function* () {
    yield* nameTaken(repo, labId, input.name)
    const now = new Date()
    const id = AgentId.make(newId("agent"))
    const agent: Agent = { id, labId, ...input, status: "idle", lastActiveAt: null, createdAt: now, updatedAt: now }
    yield* Effect.catchAll(repo.insert(agent), uniqueName(input.name))
    yield* activity.record({
      labId,
      kind: "agent.created",
      ref: agent.id,
      actor,
      message: `Created agent ${agent.name} (${agent.model})`,
      data: { name: agent.name, role: agent.role, model: agent.model }
    })
    return agent
  }).pipe(inTransaction(sql))

/** The agent as the patch leaves it, once the lifecycle, the clock and the name allow it. */
const patched = (repo: AgentsRepo, labId: LabId, current: Agent, patch: Omit<UpdateAgent, "labId">) =>
  Effect.gen(function* () {
    const id = current.id
    if (current.status === "retired") {
      return yield* new StateConflict({ resource: RESOURCE, id, problem: `agent ${id} is retired, a final state: it cannot be changed` })
    }
    const status = patch.status ?? current.status
    if (status !== current.status) yield* transition(`agent ${id}`, AgentLifecycle, current.status, status)
    if (patch.lastActiveAt !== undefined && patch.lastActiveAt.getTime() > Date.now() + SKEW_MILLIS) {
      return yield* new InvalidField({ field: "lastActiveAt", problem: "must not be in the future" })
    }
    if (patch.name !== undefined) yield* nameTaken(repo, labId, patch.name, id)
    const next: Agent = { ...applyPatch(current, patch, ["name", "role", "model", "lastActiveAt"]), status }
    return next
  })

const update = ({ sql, repo, activity }: Deps, labId: LabId, id: AgentId, patch: Omit<UpdateAgent, "labId">, actor: string) =>
  Effect.gen(function* () {
    const current = yield* orNotFound(RESOURCE, id)(repo.findForUpdate(labId, id))
    const next = yield* patched(repo, labId, current, patch)
    return yield* storeChange(
      {
        activity,
        target: { labId, id, actor },
        log: LOG,
        fields: FIELDS,
        name: (a) => a.name,
        store: (a) => Effect.catchAll(repo.update(a), uniqueName(a.name))
      },
      current,
      next
    )
  }).pipe(inTransaction(sql))

const remove = (deps: Deps, labId: LabId, id: AgentId, actor: string) =>
  removeLogged(deps, { labId, resource: RESOURCE, id, actor }, deps.repo.remove(labId, id), (deleted) => ({
    kind: "agent.deleted",
    message: `Deleted agent ${deleted.name}`,
    data: { name: deleted.name, status: deleted.status }
  }))

/**
 * The agent a write is attributed to, locked for the caller's transaction:
 * 422 naming `field` when the lab has no such agent, 409 when it is retired.
 */
const requireAgent =
  (repo: AgentsRepo) =>
  (labId: LabId, agentId: string, field = "agentId"): Effect.Effect<Agent, InvalidField | StateConflict> =>
    Effect.flatMap(
      repo.findForUpdate(labId, agentId),
      Option.match({
        onNone: () => Effect.fail(new InvalidField({ field, problem: `no agent ${agentId} in this lab` })),
        onSome: (agent): Effect.Effect<Agent, InvalidField | StateConflict> =>
          agent.status === "retired"
            ? Effect.fail(
                new StateConflict({ resource: RESOURCE, id: agentId, problem: `agent ${agentId} is retired: it cannot record anything` })
              )
            : Effect.succeed(agent)
      })
    )

/**
 * The lab's AI agents. Their lifecycle is enforced (retired is final); other
 * features attribute work to an agent through `requireAgent` and `touch`
 * (memory, standups, contributions).
 */
export class Agents extends Effect.Service<Agents>()("Agents", {
  dependencies: [AgentsRepo.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const deps: Deps = yield* Effect.all(resourceDeps(AgentsRepo))
    const { repo } = deps
    return {
      ...resourceReads(RESOURCE, repo),
      create: (labId: LabId, input: Omit<CreateAgent, "labId">, actor: string) => create(deps, labId, input, actor),
      update: (labId: LabId, id: AgentId, patch: Omit<UpdateAgent, "labId">, actor: string) =>
        update(deps, labId, id, patch, actor),
      remove: (labId: LabId, id: AgentId, actor: string) => remove(deps, labId, id, actor),
      requireAgent: requireAgent(repo),
      /** The agent did something at `at`: lastActiveAt moves forward (in the caller's transaction). */
      touch: (labId: LabId, agentId: string, at: Date) => repo.touch(labId, agentId, at)
    }
  })
}) {}
