import { Duration, Effect, Layer, Option } from "effect"
import { statfs } from "node:fs/promises"
import * as DiskSpace from "../src/status/DiskSpace.js"

/** DISK_RESERVE_BYTES by default: room for the embedded database's next WAL segments (16 MiB each) and a backup's work. */
export const DEFAULT_DISK_RESERVE_BYTES = 256 * 1024 * 1024

/** How often the free space under DATA_DIR is asked: one statfs, microseconds. */
const EVERY = Duration.seconds(1)

/** Bytes an unprivileged writer may still use on the filesystem holding `dir` (statfs's bavail); none if it cannot be asked. */
export const freeBytesUnder = (dir: string): Effect.Effect<Option.Option<number>> =>
  Effect.promise(() =>
    statfs(dir).then(
      (stats) => Option.some(stats.bavail * stats.bsize),
      () => Option.none()
    )
  )

/** The free space under `dir`, watched against `reserveBytes`. */
export const layer = (dir: string, reserveBytes: number): Layer.Layer<DiskSpace.DiskSpace> =>
  DiskSpace.layer({ freeBytes: freeBytesUnder(dir), reserveBytes, every: EVERY })
