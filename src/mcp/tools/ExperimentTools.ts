import { Effect, Option, Schema } from "effect"
import { pageQueryWith } from "../../db/Paging.js"
import {
  CreateExperiment,
  Experiment,
  ExperimentAction,
  ExperimentId,
  ExperimentListParams,
  Id,
  LogMetrics,
  MAX_POINTS,
  MetricKey,
  MetricPoint,
  Queue,
  UpdateExperiment
} from "../../experiments/Experiment.js"
import { ExperimentQueues } from "../../experiments/ExperimentQueues.js"
import { Experiments } from "../../experiments/Experiments.js"
import { MetricCursor } from "../../experiments/ExperimentsRepo.js"
import { defineTool, toolInput, ToolPage, ToolPageOf } from "../McpTool.js"
import { listed } from "./Listing.js"

const decodeMetricCursor = Schema.decodeUnknownEither(MetricCursor)
const encodeMetricCursor = Schema.encodeSync(MetricCursor)

const { labId: _listLab, ...listFields } = ExperimentListParams.fields
const { labId: _createLab, ...createFields } = CreateExperiment.fields
const { labId: _updateLab, ...updateFields } = UpdateExperiment.fields
const { labId: _actionLab, ...actionFields } = ExperimentAction.fields
const { labId: _metricsLab, ...metricsFields } = LogMetrics.fields

/** The three ends an agent may move an experiment to; running is the scheduler's to reach (from a queue). */
const Finish = Schema.Literal("completed", "failed", "cancelled").annotations({
  description: "completed or failed: a running experiment's result; cancelled: stop a draft, queued or running one"
})

/** Logged points come back under `points`: an object, so the result's structuredContent is the list itself. */
const Logged = Schema.Struct({ points: Schema.Array(MetricPoint) })

/** The experiments tools: `/api/v1/experiments` with its queues, lifecycle moves and metrics. */
export const experimentTools = Effect.map(Effect.all([Experiments, ExperimentQueues]), ([experiments, queues]) => [
  defineTool({
    name: "list_experiments",
    toolset: "experiments",
    access: "read",
    description:
      "List the lab's experiments, newest first, optionally by status (draft, queued, running, completed, failed, cancelled), queue, pod, template, project or creation time.",
    input: toolInput({ ...listFields, ...ToolPage }),
    output: ToolPageOf(Experiment),
    run: listed(experiments.list)
  }),
  defineTool({
    name: "get_experiment",
    toolset: "experiments",
    access: "read",
    description: "Read one experiment (exp_…): its params, hypothesis, status and why it got there, pod, times and cost.",
    input: toolInput({ experimentId: ExperimentId }),
    output: Experiment,
    run: ({ experimentId }, call) => experiments.get(call.labId, experimentId)
  }),
  defineTool({
    name: "create_experiment",
    toolset: "experiments",
    access: "write",
    description:
      "Create a draft experiment: a name, hypothesis and params, or a templateId whose defaults the params are merged over. Queue it with queue_experiment to run it.",
    input: toolInput(createFields),
    output: Experiment,
    run: (input, call) => experiments.create(call.labId, input, call.actor)
  }),
  defineTool({
    name: "update_experiment",
    toolset: "experiments",
    access: "write",
    description:
      "Change an experiment's name, description, hypothesis or project; its params only while it is draft or queued (a conflict once it runs).",
    input: toolInput({ experimentId: ExperimentId, ...updateFields }),
    output: Experiment,
    hints: { destructive: true, idempotent: true },
    run: ({ experimentId, labId: _labId, ...patch }, call) => experiments.update(call.labId, experimentId, patch, call.actor)
  }),
  defineTool({
    name: "list_queues",
    toolset: "experiments",
    access: "read",
    description: "List the lab's experiment queues with how many wait and run in each; use it to find the queueId for queue_experiment.",
    input: toolInput(ToolPage),
    output: ToolPageOf(Queue),
    run: listed(queues.list)
  }),
  defineTool({
    name: "queue_experiment",
    toolset: "experiments",
    access: "write",
    description:
      "Move a draft experiment into a queue (draft → queued); the scheduler starts it on a free pod of the lab. Queuing it again in the same queue changes nothing.",
    input: toolInput({
      experimentId: Id.annotations({ description: "the draft experiment (exp_…)" }),
      queueId: Id.annotations({ description: "the queue (queue_…), from list_queues" })
    }),
    output: Experiment,
    hints: { idempotent: true },
    run: ({ experimentId, queueId }, call) => queues.enqueue(call.labId, queueId, experimentId, call.actor)
  }),
  defineTool({
    name: "move_experiment",
    toolset: "experiments",
    access: "write",
    description:
      "End an experiment: to completed or failed once it ran (running → completed | failed), or cancelled (draft, queued or running). Give the reason; it is kept as statusMessage. Any other move is refused as a conflict; repeating the same move changes nothing.",
    input: toolInput({ experimentId: ExperimentId, to: Finish, ...actionFields }),
    output: Experiment,
    hints: { destructive: true, idempotent: true },
    run: ({ experimentId, to, reason }, call) => experiments.finish(call.labId, experimentId, to, reason, call.actor)
  }),
  defineTool({
    name: "log_metrics",
    toolset: "experiments",
    access: "write",
    description:
      `Append metric points (key, value, optional step and timestamp) to a running experiment, up to ${MAX_POINTS} at a time. Refused as a conflict when the experiment is not running.`,
    input: toolInput({ experimentId: ExperimentId, ...metricsFields }),
    output: Logged,
    run: ({ experimentId, points }, call) =>
      Effect.map(experiments.logMetrics(call.labId, experimentId, points, call.actor), (stored) => ({ points: stored }))
  }),
  defineTool({
    name: "list_metrics",
    toolset: "experiments",
    access: "read",
    description: "Read an experiment's metric points in the order they were logged, optionally of one key (loss, accuracy, …).",
    input: toolInput({ experimentId: ExperimentId, key: Schema.optional(MetricKey), ...ToolPage }),
    output: ToolPageOf(MetricPoint),
    run: ({ experimentId, key, limit, cursor }, call) =>
      Effect.gen(function* () {
        // as the REST handler: the cursor is a position in the log, not a creation time
        const query = yield* pageQueryWith(decodeMetricCursor, { limit, cursor })
        const listing = yield* experiments.listMetrics(call.labId, experimentId, key, query)
        return { items: listing.items, nextCursor: Option.getOrNull(Option.map(listing.next, encodeMetricCursor)) }
      })
  })
])
