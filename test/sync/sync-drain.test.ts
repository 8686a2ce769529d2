/**
 * A busy lab's outbox against a real git server: 1,100 writes to one directory, acknowledged while the host is
 * down, land as 1,100 commits in the order they were acknowledged, pushed in chunks (at most 500 writes each),
 * so the first ones are in the repository before the last are pushed; git fsck finds the result sound.
 */
import { expect, it } from "vitest"
import { workingCopy, type GitServer } from "../support/GitServer.js"
import type { TestServer } from "../support/TestServer.js"
import { bareGit, put, until, userOf } from "../support/SyncSupport.js"
import { useSyncServer } from "../support/SyncServer.js"

const WRITES = 1_100
const CHUNK = 500

let git: GitServer
let server: TestServer

useSyncServer(
  "lab-drain-",
  (stage) => {
    ;({ git, server } = stage)
  },
  30_000
)

it(`pushes ${WRITES} queued writes to one directory as ${WRITES} commits, in chunks of at most ${CHUNK}`, { timeout: 240_000 }, async () => {
  const user = userOf(server, server.adminKey)
  const url = await git.createRepo("busy")
  const wc = await workingCopy(url)
  await put(wc.dir, "runs/seed.md", "seed\n")
  const c0 = await wc.commitAndPush("seed")
  await wc.remove()
  const labId = await user.createLab("busy")
  await user.link(labId, url, true)
  await user.syncedTo(labId, c0)

  git.failWith(503, Number.POSITIVE_INFINITY)
  const paths = Array.from({ length: WRITES }, (_, i) => `runs/r${String(i).padStart(4, "0")}.md`)
  let next = 0
  const client = async () => {
    for (let i = next++; i < paths.length; i = next++) await user.writeOk(labId, `/${paths[i]}`, `result ${i}\n`, 201)
  }
  await Promise.all([client(), client(), client(), client()])
  expect((await user.status(labId)).pendingCommits).toBe(WRITES)

  const before = git.requests().length
  git.failWith(0, 0)
  const bare = bareGit(git.root, "busy")
  // the branch moves while writes are still pending: the first chunk is visible before the last is pushed
  const partly = await until(
    async () => {
      const [status, count] = await Promise.all([user.status(labId), bare("rev-list", "--count", "main")])
      return Number(count) > 1 && status.pendingCommits > 0 ? { pending: status.pendingCommits, count: Number(count) } : undefined
    },
    "a first chunk pushed",
    90_000,
    20
  )
  expect(partly.count - 1).toBeLessThanOrEqual(CHUNK)
  const done = await user.pushed(labId, 120_000)
  expect(done.lastError).toBeNull()

  const subjects = (await bare("log", "--reverse", "--format=%s", "main")).split("\n")
  expect(subjects[0]).toBe("seed")
  // acknowledged concurrently by four clients: each write once, whatever the order between clients
  expect(subjects.slice(1).sort()).toEqual(paths.map((p) => `Update ${p}`))
  expect(subjects).toHaveLength(WRITES + 1)
  const pushes = git.requests().slice(before).filter((service) => service === "git-receive-pack").length / 2
  expect(pushes).toBeGreaterThanOrEqual(Math.ceil(WRITES / CHUNK))
  expect(await bare("show", `main:${paths[WRITES - 1]}`)).toBe(`result ${WRITES - 1}`)
  await bare("fsck", "--strict", "--no-progress")
  expect(done.lastSyncSha).toBe(await bare("rev-parse", "main"))
})
