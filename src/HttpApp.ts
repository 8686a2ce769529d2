import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Layer } from "effect"
import { Api } from "./Api.js"
import { AuthenticationLive } from "./http/Authentication.js"
import { KeysHttp, MeHttp } from "./auth/Http.js"
import { ApiKeys } from "./auth/ApiKeys.js"
import { Identity } from "./auth/Identity.js"
import { UsersRepo } from "./auth/UsersRepo.js"
import { makePipeline } from "./http/Pipeline.js"
import { makeRouteTable } from "./http/RouteTable.js"
import { MCP_PATH, McpRoutes, RESOURCE_METADATA_PATH } from "./mcp/Http.js"
import { LabsHttp } from "./labs/Http.js"
import { Labs } from "./labs/Labs.js"
import { ActivityHttp } from "./activity/Http.js"
import { FilesHttp } from "./files/Http.js"
import { SyncHttp, WebhooksHttp } from "./sync/Http.js"
import { ActivityRepo } from "./activity/ActivityRepo.js"
import { Files } from "./files/Files.js"
import { Sync } from "./sync/Sync.js"
import { pushQueueLayer } from "./sync/PushQueueLive.js"
import { SyncSupervisor } from "./sync/SyncSupervisor.js"
import { WebhookReceiver } from "./sync/WebhookReceiver.js"
import { RateLimits } from "./ratelimit/RateLimits.js"
import { Quotas } from "./quotas/Quotas.js"
import { HealthHttp, StatusHttp } from "./status/Http.js"
import { MetricsHttp } from "./observability/Http.js"
import { Scrape } from "./observability/Scrape.js"
import { TasksHttp } from "./tasks/Http.js"
import { Tasks } from "./tasks/Tasks.js"
import { TelemetryHttp } from "./telemetry/Http.js"
import { Telemetry } from "./telemetry/Telemetry.js"
import { ContributionsHttp } from "./contributions/Http.js"
import { Contributions } from "./contributions/Contributions.js"
import { BackupsHttp } from "./backups/Http.js"
import { Backups } from "./backups/Backups.js"
import { SearchHttp } from "./search/Http.js"
import { Search } from "./search/Search.js"
import { PapersHttp } from "./papers/Http.js"
import { Papers } from "./papers/Papers.js"
import { DatasetsHttp } from "./datasets/Http.js"
import { Datasets } from "./datasets/Datasets.js"
import { FiguresHttp } from "./figures/Http.js"
import { Figures } from "./figures/Figures.js"
import { AgentsHttp } from "./agents/Http.js"
import { Agents } from "./agents/Agents.js"
import { MemoryHttp } from "./memory/Http.js"
import { LabRequests } from "./http/LabRequests.js"
import { Memories } from "./memory/Memories.js"
import { KnowledgeHttp } from "./knowledge/Http.js"
import { KnowledgeBase } from "./knowledge/KnowledgeBase.js"
import { SurveysHttp } from "./surveys/Http.js"
import { Surveys } from "./surveys/Surveys.js"
import { StandupsHttp } from "./standups/Http.js"
import { Standups } from "./standups/Standups.js"
import { ProjectsHttp } from "./projects/Http.js"
import { Projects } from "./projects/Projects.js"
import { ChatsHttp } from "./chats/Http.js"
import { Chats } from "./chats/Chats.js"
import { ExperimentsHttp } from "./experiments/Http.js"
import { ExperimentCosts } from "./experiments/ExperimentCosts.js"
import { ExperimentQueues } from "./experiments/ExperimentQueues.js"
import { Experiments } from "./experiments/Experiments.js"
import { ExperimentTemplates } from "./experiments/ExperimentTemplates.js"
import { PodsHttp } from "./pods/Http.js"
import { Pods } from "./pods/Pods.js"
import { CostsHttp } from "./costs/Http.js"
import { Costs } from "./costs/Costs.js"
import * as Docs from "./http/Docs.js"

const OPENAPI_PATH = "/api/v1/openapi.json"
const DOCS_PATH = "/docs"

const routes = makeRouteTable(Api, [
  { method: "GET", path: OPENAPI_PATH },
  { method: "GET", path: DOCS_PATH },
  { method: "POST", path: MCP_PATH },
  { method: "GET", path: RESOURCE_METADATA_PATH },
  { method: "GET", path: `${RESOURCE_METADATA_PATH}${MCP_PATH}` }
])

const Handlers = Layer.mergeAll(
  StatusHttp,
  HealthHttp,
  MetricsHttp,
  MeHttp,
  KeysHttp,
  LabsHttp,
  TasksHttp,
  FilesHttp,
  SyncHttp,
  WebhooksHttp,
  ActivityHttp,
  AgentsHttp,
  MemoryHttp,
  KnowledgeHttp,
  SurveysHttp,
  StandupsHttp,
  ProjectsHttp,
  ChatsHttp,
  PapersHttp,
  DatasetsHttp,
  FiguresHttp,
  TelemetryHttp,
  ContributionsHttp,
  BackupsHttp,
  SearchHttp,
  ExperimentsHttp,
  PodsHttp,
  CostsHttp
)

/** The files API queues pushes in the sync's outbox and wakes the lab's sync worker. */
const PushQueueLive = Layer.unwrapEffect(Effect.map(SyncSupervisor, (supervisor) => pushQueueLayer(supervisor.outboxChanged)))

/** The domain services the handlers use, built on the adapters the environment provides. */
export const Services = Layer.mergeAll(
  Labs.Default,
  LabRequests.Default,
  ApiKeys.Default,
  Tasks.Default,
  Telemetry.Default,
  Contributions.Default,
  Backups.Default,
  Search.Default,
  RateLimits.Default,
  Quotas.Default,
  Files.Default,
  Sync.Default,
  WebhookReceiver.Default,
  ActivityRepo.Default,
  Papers.Default,
  Datasets.Default,
  Figures.Default,
  Agents.Default,
  Memories.Default,
  KnowledgeBase.Default,
  Surveys.Default,
  Standups.Default,
  Projects.Default,
  Chats.Default,
  Experiments.Default,
  ExperimentTemplates.Default,
  ExperimentQueues.Default,
  ExperimentCosts.Default,
  Pods.Default,
  Costs.Default,
  Scrape.Default
).pipe(Layer.provide(PushQueueLive), Layer.provideMerge(SyncSupervisor.Default), Layer.provideMerge(UsersRepo.Default))

/**
 * The whole HTTP API as a layer: contract, handlers, middleware, OpenAPI and
 * docs. It needs the adapters (SqlClient, RateLimiterStore, JwtVerifier) and
 * settings (AdminKey, AdminLimits, DatabaseKind) from a composition in layers/.
 */
export const ApiLive = Layer.mergeAll(
  HttpApiBuilder.middleware(makePipeline(routes)),
  Docs.openApi(OPENAPI_PATH),
  Docs.page(DOCS_PATH),
  McpRoutes
).pipe(
  Layer.provideMerge(HttpApiBuilder.api(Api).pipe(Layer.provide(Handlers), Layer.provide(AuthenticationLive))),
  Layer.provide(Identity.Default),
  Layer.provideMerge(Services)
)
