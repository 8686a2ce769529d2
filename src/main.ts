import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { MainLive } from "../layers/Main.js"

Layer.launch(MainLive).pipe(NodeRuntime.runMain)
