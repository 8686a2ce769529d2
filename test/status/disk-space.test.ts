/**
 * The free-space watch (src/status/DiskSpace.ts) over a source of free bytes a test sets, the real statfs source on a
 * real directory, and DISK_RESERVE_BYTES as an operator writes it.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Either, Option, TestClock } from "effect"
import { statfs } from "node:fs/promises"
import { tmpdir } from "node:os"
import { AppConfig } from "../../layers/Config.js"
import { freeBytesUnder } from "../../layers/DiskSpaceWatch.js"
import * as DiskSpace from "../../src/status/DiskSpace.js"

const MIB = 1024 * 1024

const readReserve = (env: Record<string, string>) =>
  Effect.map(Effect.withConfigProvider(AppConfig, ConfigProvider.fromMap(new Map(Object.entries(env)))), (c) => c.diskReserveBytes)

describe("DiskSpace", () => {
  it.scoped("refuses writes below the reserve, says why, and accepts them again when space returns (asked every interval)", () =>
    Effect.gen(function* () {
      let free = 500 * MIB
      const disk = yield* DiskSpace.make({ freeBytes: Effect.sync(() => Option.some(free)), reserveBytes: 256 * MIB, every: Duration.seconds(1) })
      expect(yield* disk.refusal).toEqual(Option.none())
      free = 100 * MIB
      // not asked again yet
      expect(disk.writesRefused()).toEqual(Option.none())
      yield* TestClock.adjust(Duration.seconds(1))
      expect(yield* disk.refusal).toEqual(
        Option.some("100.0 MiB free under DATA_DIR, below the reserve of 256.0 MiB: writes are refused until space is freed")
      )
      free = 300 * MIB
      yield* TestClock.adjust(Duration.seconds(1))
      expect(yield* disk.refusal).toEqual(Option.none())
    })
  )

  it.scoped("a reported disk-full error refuses writes for a while; with no watched disk nothing else does", () =>
    Effect.gen(function* () {
      const disk = yield* DiskSpace.make({ freeBytes: Effect.succeed(Option.none()), reserveBytes: 256 * MIB, every: Duration.seconds(1) })
      expect(disk.writesRefused()).toEqual(Option.none())
      yield* disk.reportFull
      expect(disk.writesRefused()).toEqual(Option.some("the database reported its disk full: writes are refused until space is freed"))
    })
  )

  it.live("reads the real free space of a directory's file system (statfs's bavail)", () =>
    Effect.gen(function* () {
      const dir = tmpdir()
      const measured = yield* freeBytesUnder(dir)
      const stats = yield* Effect.promise(() => statfs(dir))
      expect(Option.isSome(measured)).toBe(true)
      // the file system may change a little between the two looks
      expect(Math.abs(Option.getOrElse(measured, () => 0) - stats.bavail * stats.bsize)).toBeLessThan(64 * MIB)
      expect(yield* freeBytesUnder("/no/such/dir")).toEqual(Option.none())
    })
  )

  it.effect("DISK_RESERVE_BYTES: 256 MiB by default, a size with a binary unit, 0 to never refuse; anything else names it", () =>
    Effect.gen(function* () {
      expect(yield* readReserve({})).toBe(256 * MIB)
      expect(yield* readReserve({ DISK_RESERVE_BYTES: "1GiB" })).toBe(1024 * MIB)
      expect(yield* readReserve({ DISK_RESERVE_BYTES: "0" })).toBe(0)
      const bad = yield* Effect.either(readReserve({ DISK_RESERVE_BYTES: "lots" }))
      expect(Either.isLeft(bad) && String(bad.left)).toMatch(/DISK_RESERVE_BYTES.*whole number of bytes/)
    })
  )
})
