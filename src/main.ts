import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Layer } from "effect"
import * as Logging from "../layers/Logging.js"
import { MainLive } from "../layers/Main.js"

Layer.launch(MainLive.pipe(Layer.provide(Logging.fromEnvironment))).pipe(NodeRuntime.runMain({ disablePrettyLogger: true }))
