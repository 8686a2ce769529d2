import { Either } from "effect"
import type { GitDiskOptions } from "../../layers/git/GitDisk.js"
import { parseAllowedHosts } from "../../src/sync/HostPolicy.js"

/** The test git servers (GitServer.ts) are on loopback: git traffic reaches them only because this allows it. */
export const LOOPBACK = Either.getOrThrow(parseAllowedHosts("127.0.0.1"))

/** Settings of on-disk git for a test server, allowed to reach the loopback git servers. */
export const diskGit = (root: string, timeoutMillis = 10_000, more: Partial<GitDiskOptions> = {}) => ({
  kind: "disk" as const,
  root,
  timeoutMillis,
  allowedHosts: LOOPBACK,
  ...more
})
