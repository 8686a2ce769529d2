import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as GitDisk from "../../layers/git/GitDisk.js"
import { LOOPBACK } from "../support/DiskGit.js"
import { startGitServer, workingCopy, type GitServer } from "../support/GitServer.js"
import { pausingGit } from "../support/PausingGit.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"
import { deliver, pushDelivery, put, sleep, userOf, webhookAnswer, type User } from "../support/SyncSupport.js"

/**
 * Issue 11 item 8: the webhook receiver must not queue behind database or git
 * work. A pull is stopped in the middle of its transaction (the git layer holds
 * it at a blob read after the first batch: on embedded PGlite the transaction
 * holds the database's one session), and a delivery sent meanwhile must be
 * answered while the pull is still held. Before: the receiver read the links and
 * recorded the delivery in the database, and waited for the pull to let it go.
 */
/** More than the pull's first batch (250 files, read before its transaction opens): the rest is read inside it. */
const CHANGED_FILES = 300
/** Far longer than an answer takes; a receiver that waits for the pull never answers while it is held. */
const UNANSWERED_MS = 10_000

describe("a webhook delivery while the lab's pull is held in its transaction (PGlite)", () => {
  let git: GitServer
  let server: TestServer
  let gitRoot: string
  let user: User
  let pausing: ReturnType<typeof pausingGit>

  beforeAll(async () => {
    git = await startGitServer()
    gitRoot = await mkdtemp(join(tmpdir(), "lab-webhook-ack-"))
    pausing = pausingGit(GitDisk.layer({ root: gitRoot, timeoutMillis: 10_000, allowedHosts: LOOPBACK }))
    server = await startTestServer({ git: { kind: "layer", layer: pausing.layer } })
    user = userOf(server, server.adminKey)
  })
  afterAll(async () => {
    await server.close()
    await git.close()
    await rm(gitRoot, { recursive: true, force: true })
  })

  it("is acknowledged without waiting for the pull, which then lands", { timeout: 60_000 }, async () => {
    const url = await git.createRepo("webhook-ack")
    const wc = await workingCopy(url)
    await put(wc.dir, "README.md", "start\n")
    const c0 = await wc.commitAndPush("first")
    const labId = await user.createLab("webhook-ack")
    await user.link(labId, url, false)
    await user.syncedTo(labId, c0)
    const secret = (await user.secret(labId)).secret ?? ""
    expect(secret).not.toBe("")
    const push = (before: string, after: string) => ({ url, fullName: "outside/webhook-ack", branch: "main", before, after })

    // an outside push of many files, and its webhook: the pull it queues stops inside its transaction
    for (let i = 0; i < CHANGED_FILES; i++) await put(wc.dir, `notes/n${i}.md`, `note ${i}\n`)
    const c1 = await wc.commitAndPush("many notes")
    const held = pausing.pauseAt("readBlob", 260)
    const first = await webhookAnswer(await deliver(server, "github", pushDelivery("github", push(c0, c1), secret)))
    expect(first).toMatchObject({ status: 202, body: { action: "queued", labs: [labId] } })
    await held.reached

    // another delivery while the pull is held: answered (not only once the pull goes on), and its redelivery is
    // known for one, without the database either
    const during = pushDelivery("github", push(c0, c1), secret)
    const answered = (response: Promise<Response>) =>
      Promise.race([
        response.then(webhookAnswer),
        sleep(UNANSWERED_MS).then(() => "not answered while the pull was held" as const)
      ])
    try {
      expect(await answered(deliver(server, "github", during))).toMatchObject({ status: 202, body: { action: "queued", labs: [labId] } })
      expect(await answered(deliver(server, "github", during))).toMatchObject({ status: 200, body: { action: "duplicate", labs: [labId] } })
    } finally {
      held.release()
    }
    await user.syncedTo(labId, c1)
    expect(await user.read(labId, `/notes/n${CHANGED_FILES - 1}.md`)).toMatchObject({ content: `note ${CHANGED_FILES - 1}\n` })
  })
})
