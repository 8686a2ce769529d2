import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { ok, okPage } from "../http/Envelope.js"
import { pageQuery } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { Projects } from "./Projects.js"

export const ProjectsHttp = HttpApiBuilder.group(Api, "projects", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const projects = yield* Projects
    const writer = (labId: string) =>
      Effect.all({ lab: labs.access(labId, "write"), principal: CurrentPrincipal })
    return handlers
      .handle("list", ({ urlParams: { labId, limit, cursor, ...filter } }) =>
        Effect.all([labs.access(labId, "read"), pageQuery({ limit, cursor })]).pipe(
          Effect.flatMap(([lab, page]) => projects.list(lab.id, { ...page, ...filter })),
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        writer(labId).pipe(
          Effect.flatMap(({ lab, principal }) => projects.create(lab.id, input, principal.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("get", ({ path, urlParams }) =>
        labs.access(urlParams.labId, "read").pipe(
          Effect.flatMap((lab) => projects.get(lab.id, path.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("update", ({ path, payload: { labId, ...patch } }) =>
        writer(labId).pipe(
          Effect.flatMap(({ lab, principal }) => projects.update(lab.id, path.id, patch, principal.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("delete", ({ path, urlParams }) =>
        writer(urlParams.labId).pipe(
          Effect.flatMap(({ lab, principal }) => projects.remove(lab.id, path.id, principal.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("addItem", ({ path, payload: { labId, ...input } }) =>
        writer(labId).pipe(
          Effect.flatMap(({ lab, principal }) => projects.addItem(lab.id, path.id, input, principal.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("removeItem", ({ path, urlParams }) =>
        writer(urlParams.labId).pipe(
          Effect.flatMap(({ lab, principal }) => projects.removeItem(lab.id, path.id, path.itemId, principal.id)),
          Effect.flatMap(ok)
        )
      )
  })
)
