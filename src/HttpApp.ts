import { HttpApiBuilder, HttpApiScalar } from "@effect/platform"
import { Effect, Layer } from "effect"
import { Api } from "./Api.js"
import { AuthenticationLive } from "./auth/Authentication.js"
import { KeysHttp, MeHttp } from "./auth/Http.js"
import { ApiKeys } from "./auth/ApiKeys.js"
import { Identity } from "./auth/Identity.js"
import { UsersRepo } from "./auth/UsersRepo.js"
import { makeGlobalMiddleware } from "./http/GlobalMiddleware.js"
import { makeRouteTable } from "./http/RouteTable.js"
import { LabsHttp } from "./labs/Http.js"
import { Labs } from "./labs/Labs.js"
import { PlannedHttp } from "./planned/Http.js"
import { ActivityHttp } from "./activity/Http.js"
import { FilesHttp } from "./files/Http.js"
import { SyncHttp, WebhooksHttp } from "./sync/Http.js"
import { ActivityRepo } from "./activity/ActivityRepo.js"
import { Files } from "./files/Files.js"
import { Sync } from "./sync/Sync.js"
import { SyncSignal } from "./sync/SyncSignal.js"
import { SyncSupervisor } from "./sync/SyncSupervisor.js"
import { WebhookReceiver } from "./sync/WebhookReceiver.js"
import { RateLimits } from "./ratelimit/RateLimits.js"
import { StatusHttp } from "./status/Http.js"
import { TasksHttp } from "./tasks/Http.js"
import { Tasks } from "./tasks/Tasks.js"

const OPENAPI_PATH = "/api/v1/openapi.json"
const DOCS_PATH = "/docs"

const routes = makeRouteTable(Api, [
  { method: "GET", path: OPENAPI_PATH },
  { method: "GET", path: DOCS_PATH }
])

const Handlers = Layer.mergeAll(
  StatusHttp,
  MeHttp,
  KeysHttp,
  LabsHttp,
  TasksHttp,
  FilesHttp,
  SyncHttp,
  WebhooksHttp,
  ActivityHttp,
  PlannedHttp
)

/** The files API wakes the lab's sync worker through this signal. */
const SyncSignalLive = Layer.effect(
  SyncSignal,
  Effect.map(SyncSupervisor, (supervisor) => ({ outboxChanged: supervisor.outboxChanged }))
)

/** The domain services the handlers use, built on the adapters the environment provides. */
export const Services = Layer.mergeAll(
  Labs.Default,
  ApiKeys.Default,
  Tasks.Default,
  RateLimits.Default,
  Files.Default,
  Sync.Default,
  WebhookReceiver.Default,
  ActivityRepo.Default
).pipe(Layer.provide(SyncSignalLive), Layer.provideMerge(SyncSupervisor.Default), Layer.provideMerge(UsersRepo.Default))

/**
 * The whole HTTP API as a layer: contract, handlers, middleware, OpenAPI and
 * docs. It needs the adapters (SqlClient, RateLimiterStore, JwtVerifier) and
 * settings (AdminKey, AdminLimits, DatabaseKind) from a composition in layers/.
 */
export const ApiLive = Layer.mergeAll(
  HttpApiBuilder.middleware(makeGlobalMiddleware(routes)),
  HttpApiBuilder.middlewareOpenApi({ path: OPENAPI_PATH }),
  HttpApiScalar.layer({ path: DOCS_PATH })
).pipe(
  Layer.provideMerge(HttpApiBuilder.api(Api).pipe(Layer.provide(Handlers), Layer.provide(AuthenticationLive))),
  Layer.provide(Identity.Default),
  Layer.provideMerge(Services)
)
