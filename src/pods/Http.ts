import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { ok, okPage } from "../http/Envelope.js"
import { pageQuery } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { Pods } from "./Pods.js"

export const PodsHttp = HttpApiBuilder.group(Api, "pods", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const pods = yield* Pods
    const actor = Effect.map(CurrentPrincipal, (p) => p.id)
    return handlers
      .handle("list", ({ urlParams: { labId, status, ...page } }) =>
        Effect.all([labs.access(labId, "read"), pageQuery(page)]).pipe(
          Effect.flatMap(([lab, page]) => pods.list(lab.id, { ...page, status: Option.fromNullable(status) })),
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        Effect.all([labs.access(labId, "write"), actor]).pipe(
          Effect.flatMap(([lab, actor]) => pods.create(lab.id, input, actor)),
          Effect.flatMap(ok)
        )
      )
      .handle("get", ({ path, urlParams }) =>
        labs.access(urlParams.labId, "read").pipe(
          Effect.flatMap((lab) => pods.get(lab.id, path.podId)),
          Effect.flatMap(ok)
        )
      )
      .handle("delete", ({ path, urlParams }) =>
        Effect.all([labs.access(urlParams.labId, "write"), actor]).pipe(
          Effect.flatMap(([lab, actor]) => pods.remove(lab.id, path.podId, actor)),
          Effect.flatMap(ok)
        )
      )
      .handle("start", ({ path, payload }) =>
        Effect.all([labs.access(payload.labId, "write"), actor]).pipe(
          Effect.flatMap(([lab, actor]) => pods.start(lab.id, path.podId, actor)),
          Effect.flatMap(ok)
        )
      )
      .handle("stop", ({ path, payload }) =>
        Effect.all([labs.access(payload.labId, "write"), actor]).pipe(
          Effect.flatMap(([lab, actor]) => pods.stop(lab.id, path.podId, actor)),
          Effect.flatMap(ok)
        )
      )
  })
)
