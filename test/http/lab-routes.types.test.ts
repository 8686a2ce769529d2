import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { describe, expect, it } from "vitest"
import { Agents } from "../../src/agents/Agents.js"
import { Api } from "../../src/Api.js"
import { Chats } from "../../src/chats/Chats.js"
import { NotFoundInLab, StateConflict } from "../../src/common/DomainErrors.js"
import { Datasets } from "../../src/datasets/Datasets.js"
import { LabRequests } from "../../src/http/LabRequests.js"
import { labRoutes } from "../../src/http/LabRoutes.js"
import type { LabId } from "../../src/labs/LabId.js"

/**
 * `labRoutes` checks each service method against the route it serves: tsc runs over this file, and each
 * `@ts-expect-error` fails the typecheck the day a mismatched service is accepted. The groups are only built, never served.
 */

const conflict = new StateConflict({ resource: "dataset", id: "x", problem: "in use" })
const missing = new NotFoundInLab({ resource: "dataset", id: "x" })

const datasetRoutes = HttpApiBuilder.group(Api, "datasets", (handlers) =>
  Effect.map(Effect.all([LabRequests, Datasets]), ([lab, datasets]) => {
    // an id the route does not deliver (the path gives a DatasetId)
    // @ts-expect-error get takes a number
    labRoutes(handlers, lab, { ...datasets, get: (_labId: LabId, _id: number) => Effect.die("unused") })
    // an input the payload does not give (the name is a string)
    // @ts-expect-error create takes a numeric name
    labRoutes(handlers, lab, { ...datasets, create: (_labId: LabId, _input: { readonly name: number }) => Effect.die("unused") })
    // the payload's own labId (an unchecked lab ref) never reaches the service
    // @ts-expect-error create reads labId from its input
    labRoutes(handlers, lab, { ...datasets, create: (_labId: LabId, _input: { readonly labId: string }) => Effect.die("unused") })
    // a value the route's success schema does not take
    // @ts-expect-error get answers something that is no Dataset
    labRoutes(handlers, lab, { ...datasets, get: (_labId: LabId, _id: string) => Effect.succeed({ nope: true }) })
    // a domain error whose envelope (409) the get route does not declare
    // @ts-expect-error get may fail with StateConflict
    labRoutes(handlers, lab, { ...datasets, get: (_labId: LabId, _id: string) => Effect.fail(conflict) })
    // an error that is no domain error and not declared at all
    // @ts-expect-error get may fail with a plain Error
    labRoutes(handlers, lab, { ...datasets, get: (_labId: LabId, _id: string) => Effect.fail(new Error("x")) })
    // a route the service has no method for
    // @ts-expect-error no remove for the delete route
    labRoutes(handlers, lab, { list: datasets.list, create: datasets.create, get: datasets.get, update: datasets.update })
    // a domain error the route declares as its envelope (404) is fine
    labRoutes(handlers, lab, { ...datasets, get: (_labId: LabId, _id: string) => Effect.fail(missing) })
    return labRoutes(handlers, lab, datasets)
  })
)

const agentRoutes = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.map(Effect.all([LabRequests, Agents]), ([lab, agents]) => {
    // the url's status filter is a string, the service's an Option
    // @ts-expect-error list does not take the url's filter
    labRoutes(handlers, lab, agents)
    return labRoutes(handlers, lab, {
      ...agents,
      list: (labId, { status, ...page }) => agents.list(labId, { ...page, status: Option.fromNullable(status) })
    })
  })
)

const chatRoutes = HttpApiBuilder.group(
  Api,
  "chats",
  // @ts-expect-error addMessage and promote are left unhandled
  (handlers) => Effect.map(Effect.all([LabRequests, Chats]), ([lab, chats]) => labRoutes(handlers, lab, chats))
)

describe("labRoutes types", () => {
  it("builds the groups whose services fit", () => {
    expect([datasetRoutes, agentRoutes, chatRoutes].every((layer) => layer !== undefined)).toBe(true)
  })
})
