import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { SecretBox } from "../common/SecretBox.js"
import { FilesRepo } from "../files/FilesRepo.js"
import { GitFigures } from "../figures/GitFigures.js"
import type { LabId } from "../labs/LabId.js"
import { DiskSpace } from "../status/DiskSpace.js"
import { type EngineDeps, remoteOf } from "./EngineDeps.js"
import { Git, GitError } from "./Git.js"
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
    // a pull writes the remote's files: while the disk is below its reserve it waits (recorded, retried with backoff);
    // an engine built without the watch (a unit test's) pulls
    const disk = yield* Effect.serviceOption(DiskSpace)
    const roomToPull = Option.match(disk, {
      onNone: () => Effect.void,
      onSome: (watch) =>
        Effect.flatMap(watch.refusal, (refused) =>
          Option.isSome(refused) ? Effect.fail(new GitError({ message: "paused: the disk is below its reserve" })) : Effect.void
        )
    })
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
        Effect.zipRight(roomToPull, observedPull(labId, pull(deps, labId, subPath, announce))),
      /** Push the outbox a chunk at a time; `stopping` is asked before each chunk. */
      push: (labId: LabId, stopping?: Effect.Effect<boolean>) => observedPush(deps, labId, push(deps, labId, stopping))
    }
  })
}) {}
