import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer } from "effect"
import * as Logging from "../layers/Logging.js"
import { MainLive, reportStartFailure } from "../layers/Main.js"

Layer.launch(MainLive.pipe(Layer.provide(Logging.fromEnvironment))).pipe(
  Effect.tapErrorCause(reportStartFailure),
  NodeRuntime.runMain({ disablePrettyLogger: true, disableErrorReporting: true })
)
