/**
 * The webhook receiver against a real git server: each host's format and
 * signature, 412 for an unsigned delivery, 401 for a wrong signature (whatever the
 * lab's secret: the answer says nothing of the link), pings,
 * duplicate deliveries, pushes to other branches, and the secret route.
 */
import { createHmac } from "node:crypto"
import { describe, expect, it } from "vitest"
import type { GitServer } from "../support/GitServer.js"
import { expectError } from "../support/http.js"
import type { TestServer } from "../support/TestServer.js"
import { deliver, HOSTS, pushDelivery, put, SETTLE_MS, sleep, userOf, webhookAnswer, type User } from "../support/SyncSupport.js"
import { linkedLab as linkedLabOn, useSyncServer } from "../support/SyncServer.js"

let git: GitServer
let server: TestServer
let user: User

useSyncServer("lab-sync-hooks-", (stage) => {
  ;({ git, server } = stage)
  user = userOf(server, server.adminKey)
})

const linkedLab = (slug: string, fullName: string) =>
  linkedLabOn(git, user, { slug, name: fullName, files: { "README.md": `# ${fullName}\n` }, autoPushOnEdit: false })

const hmac = (secret: string, body: string) => createHmac("sha256", secret).update(body).digest("hex")

describe("webhooks against a real git server", { timeout: 90_000 }, () => {
  it("refuses unsigned deliveries (412) and wrong signatures (401) alike before and after the secret, answers pings and pulls a push", async () => {
    const { url, wc, labId, c0 } = await linkedLab("hooks", "acme/hooks")
    expect((await user.status(labId)).hasWebhookSecret).toBe(false)
    await put(wc.dir, "notes/one.md", "one\n")
    const c1 = await wc.commitAndPush("one")
    const push = { url, fullName: "acme/hooks", branch: "main", before: c0, after: c1 }

    // no secret yet: refused as any delivery the secret did not sign (412 unsigned, 401 signed)
    const unsigned = { body: pushDelivery("github", push, "x").body, headers: { "x-github-event": "push", "x-github-delivery": "no-signature" } }
    await expectError(await deliver(server, "github", unsigned), 412, "precondition_failed")
    await expectError(await deliver(server, "github", pushDelivery("github", push, "not-the-secret")), 401, "unauthorized")
    await expectError(await deliver(server, "gitlab", pushDelivery("gitlab", push, "not-the-secret")), 401, "unauthorized")

    const created = await user.secret(labId)
    expect(created.existed).toBe(false)
    expect(created.secret).toMatch(/^[0-9a-f]{64}$/)
    expect(created.webhookUrl).toBe("http://127.0.0.1/api/webhooks/github")
    const secret = created.secret ?? ""
    // asked again: it exists, is not shown again, and stays the same (the push below is signed with the first)
    const again = await user.secret(labId)
    expect(again).toEqual({ existed: true, webhookUrl: created.webhookUrl })
    expect((await user.status(labId)).hasWebhookSecret).toBe(true)

    // a wrong signature, a signature of another body: 401; a missing one: 412, as before the secret
    await expectError(await deliver(server, "github", pushDelivery("github", push, "0".repeat(64))), 401, "unauthorized")
    const signed = pushDelivery("github", push, secret)
    await expectError(await deliver(server, "github", unsigned), 412, "precondition_failed")
    await expectError(
      await deliver(server, "github", { body: signed.body.replace("acme/hooks", "acme/hooks "), headers: signed.headers }),
      401,
      "unauthorized"
    )
    await sleep(SETTLE_MS)
    expect(await user.read(labId, "/notes/one.md")).toBeUndefined()

    // the ping GitHub sends when the hook is added
    const pingBody = JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1, repository: { full_name: "acme/hooks", clone_url: url } })
    const ping = await webhookAnswer(
      await deliver(server, "github", {
        body: pingBody,
        headers: { "x-github-event": "ping", "x-github-delivery": "ping-1", "x-hub-signature-256": `sha256=${hmac(secret, pingBody)}` }
      })
    )
    expect(ping).toEqual({ status: 200, body: { ok: true, event: "ping", action: "pong", labs: [labId] } })

    // the signed push: queued at once, pulled within seconds
    const queued = await webhookAnswer(await deliver(server, "github", signed))
    expect(queued).toEqual({ status: 202, body: { ok: true, event: "push", action: "queued", labs: [labId] } })
    await user.syncedTo(labId, c1)
    expect((await user.read(labId, "/notes/one.md"))?.content).toBe("one\n")

    // the same delivery again: harmless, and no second pull (a commit pushed meanwhile stays unpulled)
    await put(wc.dir, "notes/two.md", "two\n")
    const c2 = await wc.commitAndPush("two, without a webhook")
    const duplicate = await webhookAnswer(await deliver(server, "github", signed))
    expect(duplicate).toEqual({ status: 200, body: { ok: true, event: "push", action: "duplicate", labs: [labId] } })
    await sleep(SETTLE_MS)
    expect((await user.status(labId)).lastSyncSha).toBe(c1)
    expect(await user.read(labId, "/notes/two.md")).toBeUndefined()
    expect((await user.syncEntries(labId)).length).toBe(2) // the link's pull and the webhook's

    // a missed delivery is repaired with a forced pull
    expect(await user.syncNow(labId)).toEqual({ ok: true, pulled: 1, updated: 0, skipped: 0, removed: 0, sha: c2 })
  })

  it("understands each host's format and signature", async () => {
    for (const host of HOSTS) {
      const fullName = `${host}-owner/notes`
      const { url, wc, labId, c0 } = await linkedLab(`hook-${host}`, fullName)
      const secret = (await user.secret(labId)).secret ?? ""
      await put(wc.dir, `${host}.md`, `pushed to ${host}\n`)
      const c1 = await wc.commitAndPush(`a ${host} push`)
      const push = { url, fullName, branch: "main", before: c0, after: c1 }

      // a wrong secret is refused in every format
      await expectError(await deliver(server, host, pushDelivery(host, push, "f".repeat(64))), 401, "unauthorized")
      const answer = await webhookAnswer(await deliver(server, host, pushDelivery(host, push, secret)))
      expect(answer, host).toEqual({ status: 202, body: { ok: true, event: "push", action: "queued", labs: [labId] } })
      await user.syncedTo(labId, c1)
      expect((await user.read(labId, `/${host}.md`))?.content, host).toBe(`pushed to ${host}\n`)
      const [latest] = await user.syncEntries(labId)
      expect(latest?.message, host).toBe(`Synced ${fullName}: 1 added, 0 updated, 0 removed (${c1.slice(0, 7)})`)
    }
  })

  it("finds a GitLab project by path_with_namespace alone, and answers a Bitbucket ping", async () => {
    const { wc, labId, c0 } = await linkedLab("hook-names", "names/notes")
    const secret = (await user.secret(labId)).secret ?? ""
    await put(wc.dir, "by-name.md", "found by name\n")
    const c1 = await wc.commitAndPush("by name")
    const body = JSON.stringify({
      object_kind: "push",
      ref: "refs/heads/main",
      before: c0,
      after: c1,
      project: { path_with_namespace: "names/notes", web_url: "https://gitlab.example.com/names/notes" }
    })
    const answer = await webhookAnswer(
      await deliver(server, "gitlab", { body, headers: { "x-gitlab-event": "Push Hook", "x-gitlab-event-uuid": "gl-1", "x-gitlab-token": secret } })
    )
    expect(answer).toEqual({ status: 202, body: { ok: true, event: "push", action: "queued", labs: [labId] } })
    await user.syncedTo(labId, c1)
    expect((await user.read(labId, "/by-name.md"))?.content).toBe("found by name\n")

    const pingBody = JSON.stringify({ repository: { full_name: "names/notes" } })
    const ping = await webhookAnswer(
      await deliver(server, "bitbucket", {
        body: pingBody,
        headers: { "x-event-key": "diagnostics:ping", "x-request-uuid": "bb-ping", "x-hub-signature": `sha256=${hmac(secret, pingBody)}` }
      })
    )
    expect(ping.status).toBeGreaterThanOrEqual(200)
    expect(ping.status).toBeLessThan(300)
    expect(ping.body).toEqual({ ok: true, event: "ping", action: "pong", labs: [labId] })
  })

  it("ignores pushes to other branches", async () => {
    const { url, wc, labId, c0 } = await linkedLab("branches", "acme/branches")
    const secret = (await user.secret(labId)).secret ?? ""
    // a commit on main without a webhook: any pull would bring it in
    await put(wc.dir, "main-only.md", "main\n")
    const c1 = await wc.commitAndPush("on main")
    // then a feature branch on top of it
    await put(wc.dir, "feature.md", "feature\n")
    const c2 = await wc.commitAndPush("on feature", "feature")
    expect(await wc.git("ls-remote", "origin")).toContain(`${c2}\trefs/heads/feature`)
    const entriesBefore = (await user.syncEntries(labId)).length

    for (const host of ["github", "gitlab", "bitbucket"] as const) {
      const answer = await webhookAnswer(
        await deliver(server, host, pushDelivery(host, { url, fullName: "acme/branches", branch: "feature", before: c1, after: c2 }, secret))
      )
      expect(answer.status, host).toBe(200)
      expect(answer.body, host).toMatchObject({ ok: true, event: "push", action: "ignored", labs: [labId] })
    }
    // a Bitbucket push of a tag is not a branch push either
    const tagBody = JSON.stringify({
      repository: { full_name: "acme/branches" },
      push: { changes: [{ new: { type: "tag", name: "main", target: { hash: c2 } } }] }
    })
    const tag = await webhookAnswer(
      await deliver(server, "bitbucket", {
        body: tagBody,
        headers: { "x-event-key": "repo:push", "x-request-uuid": "bb-tag", "x-hub-signature": `sha256=${hmac(secret, tagBody)}` }
      })
    )
    expect(tag.body.action).toBe("ignored")

    await sleep(SETTLE_MS)
    expect(await user.paths(labId)).toEqual(["/README.md"])
    expect((await user.status(labId)).lastSyncSha).toBe(c0)
    expect((await user.syncEntries(labId)).length).toBe(entriesBefore)

    // the default branch's push is pulled; the feature branch never is
    expect(await user.syncNow(labId)).toEqual({ ok: true, pulled: 1, updated: 0, skipped: 0, removed: 0, sha: c1 })
    expect(await user.paths(labId)).toEqual(["/README.md", "/main-only.md"])
  })
})
