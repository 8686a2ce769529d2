import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { ok, okPage } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { pageQuery } from "../http/Pagination.js"
import { KnowledgeBase } from "./KnowledgeBase.js"

export const KnowledgeHttp = HttpApiBuilder.group(Api, "knowledge", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const knowledge = yield* KnowledgeBase
    return handlers
      .handle("list", ({ urlParams: { labId, limit, cursor, ...filter } }) =>
        lab.read(labId, (scope) =>
          Effect.flatMap(pageQuery({ limit, cursor }), (page) => knowledge.list(scope.labId, { ...page, ...filter }))
        ).pipe(Effect.flatMap(okPage))
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        lab.write(labId, (scope) => knowledge.create(scope.labId, input, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("get", ({ path, urlParams }) =>
        lab.read(urlParams.labId, (scope) => knowledge.get(scope.labId, path.id)).pipe(Effect.flatMap(ok))
      )
      .handle("update", ({ path, payload: { labId, ...patch } }) =>
        lab.write(labId, (scope) => knowledge.update(scope.labId, path.id, patch, scope.actor)).pipe(Effect.flatMap(ok))
      )
      .handle("delete", ({ path, urlParams }) =>
        lab.write(urlParams.labId, (scope) => knowledge.remove(scope.labId, path.id, scope.actor)).pipe(Effect.flatMap(ok))
      )
  })
)
