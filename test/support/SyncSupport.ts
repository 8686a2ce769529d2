/**
 * Helpers shared by the sync end-to-end tests (test/sync/sync-*.test.ts): a
 * user's view of the service over HTTP (files, sync status, activity), signed
 * webhooks in each git host's format, and polling.
 */
import { Schema } from "effect"
import { createHmac, randomBytes, randomUUID } from "node:crypto"
import { execFile } from "node:child_process"
import { mkdir, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { expect } from "vitest"
import { Activity } from "../../src/activity/Activity.js"
import { File, FileSummary } from "../../src/files/File.js"
import { WebhookAnswer } from "../../src/sync/RepoLink.js"
import { SyncResult, SyncStatus, WebhookSecretResult } from "../../src/sync/RepoLink.js"
import { data, json, page } from "./http.js"
import { operatorOf } from "./LabFixture.js"
import type { TestServer } from "./TestServer.js"

const run = promisify(execFile)

/** Poll `f` until it returns a value (not undefined); fail with `what` after `timeoutMs`. */
export const until = async <A>(f: () => Promise<A | undefined>, what: string, timeoutMs = 30_000, everyMs = 50): Promise<A> => {
  const start = Date.now()
  for (;;) {
    const value = await f()
    if (value !== undefined) return value
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(everyMs)
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Time given to the service to do something it must not do (pull after an
 * ignored webhook, say) before checking that it did not.
 */
export const SETTLE_MS = 1_500

/** `git` in a bare repository on the git server's disk: reads it even while the server answers 503. */
export const bareGit = (gitRoot: string, name: string) => (...args: ReadonlyArray<string>) =>
  run("git", [`--git-dir=${join(gitRoot, `${name}.git`)}`, ...args], { maxBuffer: 64 * 1024 * 1024 }).then((r) => r.stdout.trim())

/** Write a file (text or bytes) into a working copy, creating its directories. */
export const put = async (dir: string, path: string, content: string | Uint8Array) => {
  await mkdir(dirname(join(dir, path)), { recursive: true })
  await writeFile(join(dir, path), content)
}

const Deleted = Schema.Struct({ labId: Schema.String, path: Schema.String, sha: Schema.String, deleted: Schema.Literal(true) })

/** A user of the service holding `token`: the calls the tests make, decoded with the contract's schemas. */
export const userOf = (server: Pick<TestServer, "request" | "adminKey">, token: string) => {
  const call = (method: string, path: string, body?: unknown) =>
    server.request(method, path, body === undefined ? { token } : { token, json: body })

  const createLab = async (slug: string) => (await operatorOf(server, token).createLab(slug)).id

  const link = async (labId: string, repo: string, autoPushOnEdit: boolean) => {
    const response = await call("PATCH", "/api/v1/sync", { labId, repo, autoPushOnEdit })
    const body = await json(response)
    expect(response.status, JSON.stringify(body)).toBe(200)
    return Schema.decodeUnknownSync(SyncStatus)(body)
  }

  const status = async (labId: string) => {
    const response = await call("GET", `/api/v1/sync?labId=${labId}`)
    const body = await json(response)
    expect(response.status, JSON.stringify(body)).toBe(200)
    return Schema.decodeUnknownSync(SyncStatus)(body)
  }

  /** POST /api/v1/sync/secret: the raw response and its decoded body. */
  const secret = async (labId: string) => {
    const response = await call("POST", "/api/v1/sync/secret", { labId })
    const body = await json(response)
    expect(response.status, JSON.stringify(body)).toBe(200)
    return Schema.decodeUnknownSync(WebhookSecretResult)(body, { onExcessProperty: "error" })
  }

  /** POST /api/v1/sync (a forced pull) and its SyncResult. */
  const syncNow = async (labId: string, subPath?: string) => {
    const response = await call("POST", "/api/v1/sync", subPath === undefined ? { labId } : { labId, subPath })
    const body = await json(response)
    expect(response.status, JSON.stringify(body)).toBe(200)
    return Schema.decodeUnknownSync(SyncResult)(body, { onExcessProperty: "error" })
  }

  /** The file at `path`, or undefined when the API answers 404. */
  const read = async (labId: string, path: string) => {
    const response = await call("GET", `/api/v1/files?labId=${labId}&path=${encodeURIComponent(path)}`)
    if (response.status === 404) {
      await response.body?.cancel()
      return undefined
    }
    return data(response, File)
  }

  /** Every file of the lab (all pages of the listing), by path. */
  const files = async (labId: string) => {
    const all: Array<typeof FileSummary.Type> = []
    let cursor: string | null = null
    for (;;) {
      const query: string = `/api/v1/files?labId=${labId}&limit=100${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
      const listing = await page(await call("GET", query), FileSummary)
      all.push(...listing.data)
      if (!listing.meta.has_more || listing.meta.next_cursor === null) return all
      cursor = listing.meta.next_cursor
    }
  }

  /** The sorted paths of every file of the lab. */
  const paths = async (labId: string) => (await files(labId)).map((f) => f.path).sort()

  /** The lab's activity feed, newest first, walked `pageSize` entries at a time. */
  const activity = async (labId: string, pageSize = 100) => {
    const all: Array<Activity> = []
    let cursor: string | null = null
    for (;;) {
      const query: string = `/api/v1/activity?labId=${labId}&limit=${pageSize}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
      const listing = await page(await call("GET", query), Activity)
      expect(listing.data.length).toBeLessThanOrEqual(pageSize)
      all.push(...listing.data)
      if (!listing.meta.has_more) {
        expect(listing.meta.next_cursor).toBeNull()
        return all
      }
      expect(listing.meta.next_cursor).not.toBeNull()
      cursor = listing.meta.next_cursor
    }
  }

  const syncEntries = async (labId: string, pageSize?: number) => (await activity(labId, pageSize)).filter((a) => a.kind === "sync")

  const write = (labId: string, path: string, content: string, sha?: string) =>
    call("POST", "/api/v1/files", sha === undefined ? { labId, path, content } : { labId, path, content, sha })
  const update = (labId: string, path: string, content: string, sha?: string) =>
    call("PATCH", "/api/v1/files", sha === undefined ? { labId, path, content } : { labId, path, content, sha })
  const remove = (labId: string, path: string, sha?: string) =>
    call("DELETE", `/api/v1/files?labId=${labId}&path=${encodeURIComponent(path)}${sha === undefined ? "" : `&sha=${sha}`}`)

  const writeOk = async (labId: string, path: string, content: string, status = 201) => data(await write(labId, path, content), File, status)
  const updateOk = async (labId: string, path: string, content: string) => data(await update(labId, path, content), File)
  const removeOk = async (labId: string, path: string) => data(await remove(labId, path), Deleted)

  /** Wait until the last synced commit is `sha` (the pull that follows a link or a webhook has run). */
  const syncedTo = (labId: string, sha: string, timeoutMs?: number) =>
    until(async () => {
      const s = await status(labId)
      return s.lastSyncSha === sha ? s : undefined
    }, `lab ${labId} synced to ${sha}`, timeoutMs)

  /** Wait until every acknowledged write has been pushed. */
  const pushed = (labId: string, timeoutMs?: number) =>
    until(async () => {
      const s = await status(labId)
      return s.pendingCommits === 0 ? s : undefined
    }, `lab ${labId} has no pending commits`, timeoutMs)

  return {
    call,
    createLab,
    link,
    status,
    secret,
    syncNow,
    read,
    files,
    paths,
    activity,
    syncEntries,
    write,
    update,
    remove,
    writeOk,
    updateOk,
    removeOk,
    syncedTo,
    pushed
  }
}
export type User = ReturnType<typeof userOf>

export type Host = "github" | "gitlab" | "gitea" | "forgejo" | "bitbucket"
export const HOSTS: ReadonlyArray<Host> = ["github", "gitlab", "gitea", "forgejo", "bitbucket"]

/** A push as the git host reports it. */
export interface PushEvent {
  /** The clone URL the lab is linked to. */
  readonly url: string
  /** `owner/name` */
  readonly fullName: string
  readonly branch: string
  readonly before: string
  readonly after: string
}

const hmac = (secret: string, body: string) => createHmac("sha256", secret).update(body, "utf8").digest("hex")

/** The body and headers a git host sends for a push, signed with `secret`. */
export const pushDelivery = (host: Host, push: PushEvent, secret: string, deliveryId: string = randomUUID()) => {
  const ref = `refs/heads/${push.branch}`
  const webUrl = push.url.replace(/\.git$/, "")
  switch (host) {
    case "github":
    case "gitea":
    case "forgejo": {
      const body = JSON.stringify({
        ref,
        before: push.before,
        after: push.after,
        repository: { full_name: push.fullName, clone_url: push.url, html_url: webUrl, default_branch: "main" },
        pusher: { name: "outside", email: "outside@example.com" },
        commits: [{ id: push.after, message: "outside change", added: [], removed: [], modified: [] }]
      })
      const headers: Record<string, string> =
        host === "github"
          ? { "x-github-event": "push", "x-github-delivery": deliveryId, "x-hub-signature-256": `sha256=${hmac(secret, body)}` }
          : host === "gitea"
            ? { "x-gitea-event": "push", "x-gitea-delivery": deliveryId, "x-gitea-signature": hmac(secret, body) }
            : { "x-forgejo-event": "push", "x-forgejo-delivery": deliveryId, "x-forgejo-signature": hmac(secret, body) }
      return { body, headers }
    }
    case "gitlab": {
      const body = JSON.stringify({
        object_kind: "push",
        event_name: "push",
        ref,
        before: push.before,
        after: push.after,
        project: { path_with_namespace: push.fullName, git_http_url: push.url, web_url: webUrl, default_branch: "main" },
        commits: [{ id: push.after, message: "outside change", added: [], removed: [], modified: [] }],
        total_commits_count: 1
      })
      return { body, headers: { "x-gitlab-event": "Push Hook", "x-gitlab-event-uuid": deliveryId, "x-gitlab-token": secret } }
    }
    case "bitbucket": {
      const body = JSON.stringify({
        repository: { full_name: push.fullName, type: "repository", links: { html: { href: `https://bitbucket.org/${push.fullName}` } } },
        push: {
          changes: [
            {
              old: { type: "branch", name: push.branch, target: { hash: push.before } },
              new: { type: "branch", name: push.branch, target: { hash: push.after } },
              created: false,
              closed: false
            }
          ]
        }
      })
      return { body, headers: { "x-event-key": "repo:push", "x-request-uuid": deliveryId, "x-hub-signature": `sha256=${hmac(secret, body)}` } }
    }
  }
}

/** POST a delivery to the service's receiver. */
export const deliver = (server: Pick<TestServer, "request">, host: string, delivery: { readonly body: string; readonly headers: Record<string, string> }) =>
  server.request("POST", `/api/webhooks/${host}`, { body: delivery.body, headers: { "content-type": "application/json", ...delivery.headers } })

/** The receiver's success answer, with its status. */
export const webhookAnswer = async (response: Response) => {
  const body = await json(response)
  return { status: response.status, body: Schema.decodeUnknownSync(WebhookAnswer)(body, { onExcessProperty: "error" }) }
}

/** An admin key and master key a test can reuse across restarts. */
export const fixedKeys = () => ({
  adminKey: `lsk_test_admin_${randomBytes(16).toString("hex")}`,
  masterKey: randomBytes(32).toString("hex")
})
