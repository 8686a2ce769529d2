/**
 * The link to a repository against real git servers: the stored token stays on
 * the repository it was given for, PATCH is a partial update, a link change waits for
 * the lab's git job in progress, and writes git refuses never block the outbox.
 */
import { Schema } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoKeyOf, sameRepository, SyncStatus } from "../../src/sync/RepoLink.js"
import { data, expectError, json } from "../support/http.js"
import { startGitServer, type GitServer } from "../support/GitServer.js"
import { repoWith } from "../support/SyncServer.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"
import { put, sleep, until, userOf, type User } from "../support/SyncSupport.js"
import { diskGit } from "../support/DiskGit.js"

let hostA: GitServer
let hostB: GitServer
let server: TestServer
let admin: User
const temp: Array<string> = []

beforeAll(async () => {
  hostA = await startGitServer()
  hostB = await startGitServer()
  const root = await mkdtemp(join(tmpdir(), "lab-sync-link-"))
  temp.push(root)
  server = await startTestServer({ git: diskGit(root, 10_000) })
  admin = userOf(server, server.adminKey)
}, 120_000)
afterAll(async () => {
  await server.close()
  await hostA.close()
  await hostB.close()
  for (const dir of temp) await rm(dir, { recursive: true, force: true })
})

/** PATCH /api/v1/sync as `as`: the raw response. */
const patchLink = (as: User, body: Record<string, unknown>) => as.call("PATCH", "/api/v1/sync", body)
const linked = async (response: Response) => {
  const body = await json(response)
  expect(response.status, JSON.stringify(body)).toBe(200)
  return Schema.decodeUnknownSync(SyncStatus)(body)
}

/** A key holding only `lab:<slug>:rw`, as any member of the lab may have. */
const memberOf = async (slug: string) => {
  const Created = Schema.Struct({ key: Schema.String })
  const created = await data(await admin.call("POST", "/api/v1/auth/keys", { name: "member", scopes: [`lab:${slug}:rw`] }), Created, 201)
  return userOf(server, created.key)
}

/** A lab of the operator linked to `repo` with `token`, synced to its first commit: its id and the link. */
const labWithToken = async (slug: string, repo: { readonly url: string; readonly head: string }, token: string) => {
  const labId = await admin.createLab(slug)
  const link = await linked(await patchLink(admin, { labId, repo: repo.url, token }))
  await admin.syncedTo(labId, repo.head)
  return { labId, link }
}

const basic = (token: string) => `Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`

describe("the stored token stays on its repository", { timeout: 90_000 }, () => {
  it("a member moving repo to another origin without a token drops it: that host never sees it", async () => {
    const a = await repoWith(hostA, "acme/private", { "README.md": "a\n" })
    const b = await repoWith(hostB, "evil/x", { "bait.md": "b\n" })
    const { labId, link } = await labWithToken("token-origin", a, "tok-A")
    expect(link.hasToken).toBe(true)
    expect(hostA.authorizations()).toContain(basic("tok-A"))

    const member = await memberOf("token-origin")
    const moved = await linked(await patchLink(member, { labId, repo: b.url }))
    expect(moved).toMatchObject({ repo: b.url, hasToken: false })
    await member.syncedTo(labId, b.head)
    await member.syncNow(labId)
    expect(hostB.requests().length).toBeGreaterThan(0)
    expect(hostB.authorizations().filter((h) => h !== undefined)).toEqual([])

    // a token given in the same request is the one for that origin
    const seen = hostB.authorizations().length
    expect((await linked(await patchLink(member, { labId, repo: b.url, token: "tok-B" }))).hasToken).toBe(true)
    await member.syncNow(labId)
    expect(hostB.authorizations().slice(seen)).toContain(basic("tok-B"))
    expect(hostB.authorizations()).not.toContain(basic("tok-A"))
  })

  it("a member moving repo to another repository on the same origin without a token drops it: that repository never sees it", async () => {
    const a = await repoWith(hostA, "acme/kept-secret", { "README.md": "a\n" })
    const other = await repoWith(hostA, "acme/other", { "bait.md": "b\n" })
    const { labId, link } = await labWithToken("token-repo", a, "tok-repo")
    expect(link.hasToken).toBe(true)

    const member = await memberOf("token-repo")
    const moved = await linked(await patchLink(member, { labId, repo: other.url }))
    expect(moved).toMatchObject({ repo: other.url, hasToken: false })
    await member.syncedTo(labId, other.head)
    await member.syncNow(labId)
    const toOther = () => hostA.received().filter((r) => r.path.startsWith("/acme/other.git/"))
    expect(toOther().length).toBeGreaterThan(0)
    expect(toOther().filter((r) => r.authorization !== undefined)).toEqual([])
    // moving back does not bring the token back: it was dropped, not hidden
    expect((await linked(await patchLink(member, { labId, repo: a.url }))).hasToken).toBe(false)

    // a token given in the same request is the one for that repository
    expect((await linked(await patchLink(member, { labId, repo: other.url, token: "tok-other" }))).hasToken).toBe(true)
    const seen = toOther().length
    await member.syncNow(labId)
    expect(toOther().slice(seen).map((r) => r.authorization)).toContain(basic("tok-other"))
    expect(toOther().map((r) => r.authorization)).not.toContain(basic("tok-repo"))
  })

  it("keeps the token for the same repository however the URL spells it", async () => {
    const a = await repoWith(hostA, "acme/one", { "one.md": "1\n" })
    const { labId } = await labWithToken("token-same-repo", a, "tok-1")
    await put(a.wc.dir, "two.md", "2\n")
    const head = await a.wc.commitAndPush("two")
    const seen = hostA.authorizations().length
    const respelled = a.url.replace("http://127.0.0.1", "HTTP://127.0.0.1")
    expect((await linked(await patchLink(admin, { labId, repo: respelled }))).hasToken).toBe(true)
    await admin.syncedTo(labId, head)
    expect(hostA.authorizations().slice(seen)).toContain(basic("tok-1"))
  })

  it.each([
    ["another origin", "token-engine", () => hostB, "evil/y"],
    ["another repository on its origin", "token-engine-path", () => hostA, "evil/z"]
  ] as const)("the sync never sends a token to %s than the one it was given for, whatever the link says", async (_, slug, host, name) => {
    const a = await repoWith(hostA, `acme/${slug}`, { "README.md": "a\n" })
    const b = await repoWith(host(), name, { "bait.md": "b\n" })
    const { labId } = await labWithToken(slug, a, "tok-kept")
    // the link changed behind the API's back (an old backup restored, say): the token's repository is still A
    await server.sql(
      (sql) => sql`UPDATE lab_repos SET repo = ${b.url}, repo_key = ${repoKeyOf(b.url)}, last_sync_sha = NULL WHERE lab_id = ${labId}`
    )
    expect((await admin.status(labId)).hasToken).toBe(false)
    const seen = host().received().length
    await admin.syncNow(labId)
    expect((await admin.status(labId)).lastSyncSha).toBe(b.head)
    const toB = host().received().slice(seen).filter((r) => r.path.startsWith(`/${name}.git/`))
    expect(toB.length).toBeGreaterThan(0)
    expect(toB.filter((r) => r.authorization !== undefined)).toEqual([])
  })
})

describe("sameRepository: repositories compared as their host tells them apart", () => {
  it("folds case and a .git suffix on hosts known to (GitHub, GitLab, Bitbucket, Codeberg)", () => {
    expect(sameRepository("https://github.com/Acme/Notes.git", "https://GITHUB.com/acme/notes")).toBe(true)
    expect(sameRepository("https://github.com/acme/notes/", "https://github.com:443/acme/notes.git")).toBe(true)
    expect(sameRepository("https://gitlab.com/group/sub/Project", "https://gitlab.com/group/sub/project.git")).toBe(true)
    expect(sameRepository("https://github.com/acme/notes", "https://github.com/acme/other")).toBe(false)
    expect(sameRepository("https://github.com/acme/notes", "https://github.com/acme/notes/wiki")).toBe(false)
    expect(sameRepository("https://github.com/acme/notes", "http://github.com/acme/notes")).toBe(false)
  })

  it("compares the path exactly elsewhere (a plain git server may hold both x and X, x and x.git)", () => {
    expect(sameRepository("https://git.example.com/Team/a.git", "https://GIT.example.com:443/Team/./b/../a.git/")).toBe(true)
    expect(sameRepository("https://git.example.com/team/a.git", "https://git.example.com/Team/a.git")).toBe(false)
    expect(sameRepository("https://git.example.com/team/a.git", "https://git.example.com/team/a")).toBe(false)
    expect(sameRepository("https://git.example.com/team/a.git", "https://git.example.com:8443/team/a.git")).toBe(false)
    expect(sameRepository("not a url", "not a url")).toBe(false)
  })
})

describe("PATCH /api/v1/sync is a partial update", { timeout: 90_000 }, () => {
  it("keeps every field the request leaves out", async () => {
    const a = await repoWith(hostA, "acme/partial", { "notes/a.md": "a\n", "other/b.md": "b\n" })
    const labId = await admin.createLab("partial")
    const first = await linked(await patchLink(admin, { labId, repo: a.url, defaultBranch: "main", token: "tok-p" }))
    expect(first).toMatchObject({ repo: a.url, autoPushOnEdit: false, hasToken: true })
    await admin.syncedTo(labId, a.head)

    const toggled = await linked(await patchLink(admin, { labId, autoPushOnEdit: true }))
    expect(toggled).toMatchObject({ repo: a.url, defaultBranch: "main", autoPushOnEdit: true, hasToken: true, lastSyncSha: a.head })
    const untouched = await linked(await patchLink(admin, { labId }))
    expect(untouched).toMatchObject({ repo: a.url, defaultBranch: "main", autoPushOnEdit: true, hasToken: true, lastSyncSha: a.head })
    // and the write path it turned on works
    await admin.writeOk(labId, "/notes/new.md", "new\n", 201)
    await admin.pushed(labId)
    await a.wc.pull()
    expect(await a.wc.git("show", "HEAD:notes/new.md")).toBe("new")
  })

  it("still needs repo to link a lab that has none: 422 naming repo", async () => {
    const labId = await admin.createLab("partial-unlinked")
    const message = await expectError(await patchLink(admin, { labId, autoPushOnEdit: true }), 422, "validation_error")
    expect(message).toMatch(/\brepo\b/)
    await expectError(await admin.call("GET", `/api/v1/sync?labId=${labId}`), 404, "not_found")
  })

  it("a forced pull's subPath may be written notes, /notes or notes/", async () => {
    const a = await repoWith(hostA, "acme/subpath", { "notes/a.md": "a\n", "other/b.md": "b\n" })
    const labId = await admin.createLab("subpath")
    await linked(await patchLink(admin, { labId, repo: a.url }))
    await admin.syncedTo(labId, a.head)
    await put(a.wc.dir, "notes/a.md", "A\n")
    await put(a.wc.dir, "other/b.md", "B\n")
    const head = await a.wc.commitAndPush("outside")
    expect(await admin.syncNow(labId, "notes")).toEqual({ ok: true, pulled: 0, updated: 1, skipped: 0, removed: 0, sha: head })
    expect((await admin.read(labId, "/other/b.md"))?.content).toBe("b\n")
    for (const subPath of ["/notes", "notes/", "/notes/"]) {
      expect(await admin.syncNow(labId, subPath)).toEqual({ ok: true, pulled: 0, updated: 0, skipped: 0, removed: 0, sha: head })
    }
    expect((await admin.read(labId, "/notes/a.md"))?.content).toBe("A\n")
    await expectError(await admin.call("POST", "/api/v1/sync", { labId, subPath: "../x" }), 422, "validation_error")
  })
})

describe("a link change and the lab's git jobs never race", { timeout: 90_000 }, () => {
  it("relinking while a fetch is in flight waits for it, answers 200, and nothing of the old repository lands after", async () => {
    const a = await repoWith(hostA, "acme/old", { "old.md": "old\n" })
    const b = await repoWith(hostB, "acme/new", { "new.md": "new\n" })
    const labId = await admin.createLab("relink-race")
    const release = hostA.holdUploadPack()
    try {
      await linked(await patchLink(admin, { labId, repo: a.url }))
      await until(async () => (hostA.heldRequests() > 0 ? true : undefined), "the first fetch to reach the host")
      let answered = false
      const relink = patchLink(admin, { labId, repo: b.url }).then(async (response) => {
        answered = true
        return { response, oldSyncsWhenAnswered: await syncsOf(labId, "acme/old") }
      })
      await sleep(1_000)
      expect(answered, "the relink waits for the fetch in progress").toBe(false)
      release()
      const { response, oldSyncsWhenAnswered } = await relink
      expect((await linked(response)).repo).toBe(b.url)
      await admin.syncedTo(labId, b.head)
      expect(await admin.paths(labId)).toEqual(["/new.md"])
      expect(await syncsOf(labId, "acme/old")).toBe(oldSyncsWhenAnswered)
      expect((await admin.status(labId)).lastError).toBeNull()
    } finally {
      release()
    }
  })
})

/** How many activity entries say the lab synced from `name`. */
const syncsOf = async (labId: string, name: string) =>
  (await admin.syncEntries(labId)).filter((entry) => entry.message.startsWith(`Synced ${name}:`)).length

describe("a path git refuses never blocks the outbox", { timeout: 90_000 }, () => {
  const refused = ["/.git./config", "/.git /config", "/git~1/config", "/.g\u200cit/config", "/.GIT/hooks/pre-commit"]

  it.each(refused.map((path) => [path]))("the files API refuses %j with 422", async (path) => {
    const labId = await admin.createLab(`refused-${refused.indexOf(path)}`)
    const message = await expectError(await admin.write(labId, path, "[core]\n"), 422, "validation_error")
    expect(message).toMatch(/path/)
    await expectError(await admin.update(labId, path, "[core]\n"), 422, "validation_error")
  })

  it("an entry queued by an older version is set aside with its reason, shown in GET /sync, and later writes land", async () => {
    const a = await repoWith(hostA, "acme/stuck", { "README.md": "hi\n" })
    const labId = await admin.createLab("stuck-outbox")
    await linked(await patchLink(admin, { labId, repo: a.url, autoPushOnEdit: true }))
    await admin.syncedTo(labId, a.head)
    // what an older version stored for POST /files {path: "/.git./config"}: the file and its outbox entry
    await server.sql(
      (sql) => sql`
        INSERT INTO files (lab_id, path, content, size, sha, source, from_git, created_at, updated_at)
        VALUES (${labId}, '/.git./config', '[core]', 6, ${"0".repeat(40)}, 'api', false, now(), now())`
    )
    await server.sql(
      (sql) => sql`INSERT INTO outbox (lab_id, path, content, actor, created_at) VALUES (${labId}, '/.git./config', '[core]', 'key_old', now())`
    )
    await admin.writeOk(labId, "/notes/after.md", "after\n", 201)
    const status = await admin.pushed(labId)
    expect(status.lastError).toBeNull()
    expect(status.setAsideCommits).toBe(1)
    expect(status.setAside).toEqual([
      { path: "/.git./config", operation: "write", reason: expect.stringMatching(/git refuses/), at: expect.any(Number) }
    ])
    await a.wc.pull()
    expect(await a.wc.git("show", "HEAD:notes/after.md")).toBe("after")

    // the stored file can still be read and deleted; its delete is set aside too (git never had it)
    expect((await admin.read(labId, "/.git./config"))?.content).toBe("[core]")
    await admin.removeOk(labId, "/.git./config")
    await admin.writeOk(labId, "/notes/later.md", "later\n", 201)
    const later = await admin.pushed(labId)
    expect(later.setAsideCommits).toBe(2)
    expect(later.setAside.map((w) => [w.path, w.operation])).toEqual([
      ["/.git./config", "delete"],
      ["/.git./config", "write"]
    ])
    await a.wc.pull()
    expect(await a.wc.git("ls-tree", "-r", "--name-only", "HEAD")).toBe(["README.md", "notes/after.md", "notes/later.md"].join("\n"))
  })
})
