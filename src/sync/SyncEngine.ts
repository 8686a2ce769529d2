import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { SecretBox } from "../common/SecretBox.js"
import { FilesRepo } from "../files/FilesRepo.js"
import { GitFigures } from "../figures/GitFigures.js"
import type { LabId } from "../labs/LabId.js"
import { type EngineDeps, remoteOf } from "./EngineDeps.js"
import { Git } from "./Git.js"
import { pull } from "./SyncPull.js"
import { push } from "./SyncPush.js"
import { SyncRepo } from "./SyncRepo.js"
import { observedProbe, observedPull, observedPush } from "./SyncObserved.js"

/**
 * The git work of one lab: pull (remote -> files, SyncPull.ts, planned by PullPlan.ts) and push (outbox -> remote,
 * SyncPush.ts). Only the lab's worker (SyncSupervisor) calls these, one at a time.
 */
export class SyncEngine extends Effect.Service<SyncEngine>()("SyncEngine", {
  dependencies: [SyncRepo.Default, FilesRepo.Default, ActivityRepo.Default, GitFigures.Default],
  effect: Effect.gen(function* () {
    const deps: EngineDeps = {
      sql: yield* SqlClient.SqlClient,
      git: yield* Git,
      box: yield* SecretBox,
      links: yield* SyncRepo,
      files: yield* FilesRepo,
      activity: yield* ActivityRepo,
      figures: yield* GitFigures
    }
    return {
      /** Does the lab's host answer now (Git.probe)? Nothing to ask when the lab is not linked. */
      probe: (labId: LabId) =>
        observedProbe(
          deps,
          labId,
          Effect.flatMap(deps.links.link(labId), (link) =>
            Option.isNone(link) ? Effect.void : Effect.flatMap(remoteOf(deps, link.value), (remote) => deps.git.probe(labId, remote))
          )
        ),
      /** Fetch the default branch and apply it. `announce`: record activity even when nothing changed. */
      pull: (labId: LabId, subPath: Option.Option<string>, announce: boolean) =>
        observedPull(labId, pull(deps, labId, subPath, announce)),
      /** Push the outbox a chunk at a time; `stopping` is asked before each chunk. */
      push: (labId: LabId, stopping?: Effect.Effect<boolean>) => observedPush(deps, labId, push(deps, labId, stopping))
    }
  })
}) {}
