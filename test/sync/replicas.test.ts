/**
 * Three replicas (real `src/main.ts` processes) on one PostgreSQL and one Redis, three labs auto-pushing to a real
 * git server: API writes and signed webhooks spread over all three, outside pushes, and one replica SIGKILLed in
 * the middle. At the end every acknowledged write is in its repository exactly once, each lab equals its remote
 * tree, no lab's git work ran on two replicas at once (the pull and push lines of their JSON logs), a key
 * revoked on one replica is refused on another within 1 s, and a webhook's pull whose replica died before it
 * finished is done by another within 30 s. Runs when DATABASE_URL is set and Redis answers.
 */
import { Schema } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { FileSummary } from "../../src/files/File.js"
import type { GitServer } from "../support/GitServer.js"
import { page } from "../support/http.js"
import { freshDatabase, operatorOf } from "../support/LabFixture.js"
import { redisUp, REDIS_HOST, REDIS_PORT } from "../support/RedisProbe.js"
import { type ServiceProcess, startServiceProcess } from "../support/ServiceProcess.js"
import { bareGit, deliver, fixedKeys, pushDelivery, put, sleep, until, userOf } from "../support/SyncSupport.js"
import { linkedLab, useGitServer } from "../support/SyncServer.js"

const DATABASE_URL = process.env["DATABASE_URL"]
const ROUNDS = 30
const KILL_AT = 12

let git: GitServer
let base: string
useGitServer("lab-replicas-", (started, root) => {
  git = started
  base = root
})
const drops: Array<() => Promise<void>> = []
afterAll(() => Promise.all(drops.map((drop) => drop())))

const Line = Schema.parseJson(
  Schema.Struct({ message: Schema.String, timestamp: Schema.String, annotations: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })
)
const JobLine = Schema.Struct({ lab: Schema.String, duration_ms: Schema.Number })

/** The git jobs a replica's log reports: [start, end] in ms for each lab. */
const jobsOf = (output: string) =>
  output
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => Schema.decodeUnknownSync(Line)(l))
    .filter((l) => /^(pull|push)( failed)?$/.test(l.message))
    .map((l) => {
      const job = Schema.decodeUnknownSync(JobLine)(l.annotations, { onExcessProperty: "ignore" })
      const end = Date.parse(l.timestamp)
      return { lab: job.lab, start: end - job.duration_ms, end }
    })

describe.skipIf(DATABASE_URL === undefined || !redisUp)("three replicas on one PostgreSQL and Redis", () => {
  it("lose and double nothing through a SIGKILL, never work a lab on two replicas at once, and share revocations", { timeout: 600_000 }, async () => {
    const db = await freshDatabase(DATABASE_URL)
    drops.push(db.drop)
    const keys = fixedKeys()
    const env = { REDIS_URL: `redis://${REDIS_HOST}:${REDIS_PORT}`, LOG_LEVEL: "debug", LOG_FORMAT: "json" }
    const replicas: Array<ServiceProcess> = await Promise.all(
      [0, 1, 2].map((i) => startServiceProcess({ dataDir: `${base}/replica-${i}`, databaseUrl: db.url, ...keys, env }))
    )
    const alive = new Set(replicas)
    try {
      const users = replicas.map((r) => userOf(r, keys.adminKey))
      const labs: Array<Awaited<ReturnType<typeof linkedLab>> & { name: string; secret: string; written: Set<string> }> = []
      for (const name of ["a", "b", "c"]) {
        const linked = await linkedLab(git, users[0]!, { slug: `replica-${name}`, name: `acme/replica-${name}`, files: { "README.md": `# ${name}\n` }, autoPushOnEdit: true })
        const secret = (await users[0]!.secret(linked.labId)).secret ?? ""
        labs.push({ ...linked, name, secret, written: new Set<string>() })
      }

      let killedAt = 0
      for (let round = 0; round < ROUNDS; round++) {
        if (round === KILL_AT) {
          await replicas[1]!.stop("SIGKILL")
          alive.delete(replicas[1]!)
          killedAt = Date.now()
        }
        await Promise.all(
          labs.map(async (lab, i) => {
            const replica = replicas[(round + i) % 3]!
            if (!alive.has(replica)) return
            const path = `/notes/w${round}.md`
            const answer = await replica.request("POST", "/api/v1/files", { token: keys.adminKey, json: { labId: lab.labId, path, content: `${lab.name} ${round}\n` } })
            await answer.body?.cancel()
            if (answer.status === 201) lab.written.add(path)
          })
        )
        if (round % 6 === 5) {
          // an outside push to each repository, its webhook to one replica (maybe the dead one: then lost)
          for (const [i, lab] of labs.entries()) {
            const after = await until(async () => {
              await lab.wc.pull()
              await put(lab.wc.dir, `outside/o${round}.md`, `outside ${round}\n`)
              return lab.wc.commitAndPush(`outside ${round}`).catch(() => undefined)
            }, "an outside push that is not rejected", 30_000, 200)
            const delivery = pushDelivery("github", { url: lab.url, fullName: `acme/replica-${lab.name}`, branch: "main", before: "0".repeat(40), after }, lab.secret)
            await deliver(replicas[(round + i) % 3]!, "github", delivery).then((r) => r.body?.cancel(), () => undefined)
          }
        }
      }

      // the survivors catch up: writes pushed (those the dead replica acknowledged too), outside pushes pulled
      const live = [...alive]
      for (const lab of labs) {
        await userOf(live[0]!, keys.adminKey).pushed(lab.labId, 120_000)
        await userOf(live[1]!, keys.adminKey).syncNow(lab.labId)
      }
      console.log(`all writes pushed ${Date.now() - killedAt} ms after the SIGKILL`)

      for (const lab of labs) {
        const remote = bareGit(git.root, `acme/replica-${lab.name}`)
        // every acknowledged write exactly once: one service commit per path written
        const subjects = (await remote("log", "--format=%ce %s", "main")).split("\n").filter((l) => l.startsWith("lab-service@"))
        const paths = subjects.map((s) => s.replace(/^\S+ \S+ /, "/"))
        expect(paths.length, `${lab.name}: ${subjects.join("; ")}`).toBe(lab.written.size)
        expect(new Set(paths)).toEqual(lab.written)
        // the lab equals its remote tree
        const tree = (await remote("ls-tree", "-r", "--name-only", "main")).split("\n").filter((p) => p !== "")
        const listed = await page(await live[0]!.request("GET", `/api/v1/files?labId=${lab.labId}&limit=100`, { token: keys.adminKey }), FileSummary)
        expect(listed.data.map((f) => f.path).sort()).toEqual(tree.map((p) => `/${p}`).sort())
        for (const path of tree) {
          const file = await userOf(live[0]!, keys.adminKey).read(lab.labId, `/${path}`)
          expect(file?.content, path).toBe(await remote("show", `main:${path}`).then((c) => `${c}\n`))
        }
      }

      // no lab's git work on two replicas at once
      const jobs = replicas.map((r) => jobsOf(r.output()))
      expect(jobs.every((j) => j.length > 0)).toBe(true)
      for (let a = 0; a < 3; a++) {
        for (let b = a + 1; b < 3; b++) {
          for (const x of jobs[a]!) {
            for (const y of jobs[b]!) {
              if (x.lab === y.lab) expect(x.end <= y.start || y.end <= x.start, `${x.lab}: replicas ${a} and ${b} overlap`).toBe(true)
            }
          }
        }
      }

      // a key revoked on one replica is refused on the others within 1 s
      const slug = "replica-a"
      const key = await operatorOf(live[0]!, keys.adminKey).createKey(`lab:${slug}:r`)
      const asKey = (replica: ServiceProcess) => replica.request("GET", `/api/v1/files?labId=${labs[0]!.labId}`, { token: key.key })
      expect((await asKey(live[1]!)).status).toBe(200)
      const revoked = await live[0]!.request("DELETE", `/api/v1/auth/keys?id=${key.id}`, { token: keys.adminKey })
      expect(revoked.status).toBe(200)
      await sleep(1_000)
      expect((await asKey(live[1]!)).status).toBe(401)

      // a webhook's pull taken over: the replica it reached dies while its fetch is held at the host
      const lab = labs[0]!
      await lab.wc.pull()
      await put(lab.wc.dir, "outside/late.md", "late\n")
      const after = await lab.wc.commitAndPush("late")
      const release = git.holdUploadPack()
      const delivery = pushDelivery("github", { url: lab.url, fullName: `acme/replica-${lab.name}`, branch: "main", before: "0".repeat(40), after }, lab.secret)
      expect((await deliver(live[0]!, "github", delivery)).status).toBe(202)
      await until(async () => (git.heldRequests() > 0 ? true : undefined), "the pull's fetch to reach the host", 30_000)
      await live[0]!.stop("SIGKILL")
      alive.delete(live[0]!)
      const diedAt = Date.now()
      release()
      await userOf(live[1]!, keys.adminKey).syncedTo(lab.labId, after, 30_000)
      console.log(`the dead replica's pull was taken over after ${Date.now() - diedAt} ms`)
    } finally {
      await Promise.all([...alive].map((r) => r.stop("SIGTERM")))
    }
  })
})
