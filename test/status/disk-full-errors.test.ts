/**
 * The database's own disk-full error (SQLSTATE 53100, disk_full): on PostgreSQL its disk is not DATA_DIR's and is not
 * watched from here, so the error itself is the signal. Made here by a trigger that raises it as PostgreSQL does when a
 * data file cannot be extended (a real error through the real driver, not a full disk). The write answers 507
 * insufficient_storage (it answered 500 server_error), writes are refused for a few seconds while /readyz says why,
 * reads go on, and writes come back by themselves. On PGlite, and on PostgreSQL when DATABASE_URL is set.
 */
import { afterAll, describe, expect, it } from "vitest"
import { REPORTED_FULL_HOLD } from "../../src/status/DiskSpace.js"
import { Duration } from "effect"
import { freshDatabase, operatorOf } from "../support/LabFixture.js"
import { until } from "../support/SyncSupport.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

const cleanups: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
})

const DATABASES: ReadonlyArray<readonly [string, string | undefined]> = [
  ["PGlite", undefined],
  ...(process.env.DATABASE_URL ? [["PostgreSQL", process.env.DATABASE_URL] as const] : [])
]

const DISK_FULL_TRIGGER = `
  CREATE FUNCTION disk_full_now() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'could not extend file "base/5/16387": No space left on device' USING ERRCODE = 'disk_full', HINT = 'Check free disk space.';
  END $$;
  CREATE TRIGGER disk_full_now BEFORE INSERT OR UPDATE ON files FOR EACH ROW EXECUTE FUNCTION disk_full_now();
`

/** A key's use noted (last_used_at) fails as the database does on a full disk; its revocation does not trip it. */
const KEY_USE_DISK_FULL_TRIGGER = `
  CREATE TRIGGER key_use_disk_full BEFORE UPDATE ON api_keys FOR EACH ROW
  WHEN (NEW.last_used_at IS DISTINCT FROM OLD.last_used_at) EXECUTE FUNCTION disk_full_now();
`

const answerAs = async (server: TestServer, token: string, method: string, path: string) => {
  const response = await server.request(method, path, { token })
  return { status: response.status, body: await response.text() }
}

const answer = async (server: TestServer, method: string, path: string, json?: unknown) => {
  const response = await server.request(method, path, json === undefined ? { token: server.adminKey } : { token: server.adminKey, json })
  return { status: response.status, body: await response.text() }
}

describe.each(DATABASES)("a disk-full error from the database (%s)", (_name, url) => {
  it("53100 answers 507; writes are refused for a while with /readyz saying why, reads go on; then writes again", { timeout: 60_000 }, async () => {
    const db = await freshDatabase(url)
    cleanups.push(db.drop)
    const server = await startTestServer(db.settings)
    cleanups.push(server.close)
    const lab = await operatorOf(server).createLab("disk-errors")
    const labId = lab.id
    const first = await answer(server, "POST", "/api/v1/files", { labId, path: "/a.md", content: "a" })
    expect(first.status, first.body).toBe(201)

    await server.sql((sql) => sql.unsafe(DISK_FULL_TRIGGER))
    const failed = await answer(server, "POST", "/api/v1/files", { labId, path: "/b.md", content: "b" })
    expect(failed.status, failed.body).toBe(507)
    expect(JSON.parse(failed.body)).toEqual({
      error: {
        code: "insufficient_storage",
        status: 507,
        message: "the disk is full: the request could not be completed; send it again once space is freed (GET /readyz says when)"
      }
    })
    const ready = await answer(server, "GET", "/readyz")
    expect(ready.status).toBe(503)
    expect(JSON.parse(ready.body)).toEqual({
      error: {
        code: "service_unavailable",
        status: 503,
        message: "not ready: insufficient storage: the database reported its disk full: writes are refused until space is freed"
      }
    })
    // another write, even one the trigger would not stop, waits out the hold
    const other = await answer(server, "POST", "/api/v1/labs", { slug: "while-full", name: "Full", plan: "free" })
    expect(other.status, other.body).toBe(507)
    const read = await answer(server, "GET", `/api/v1/files?labId=${labId}&path=/a.md`)
    expect(read.status, read.body).toBe(200)

    // space back (the trigger gone): once the hold is over, writes go through without a restart
    await server.sql((sql) => sql.unsafe("DROP TRIGGER disk_full_now ON files"))
    await until(
      async () => ((await answer(server, "GET", "/readyz")).status === 200 ? true : undefined),
      "/readyz to turn 200",
      Duration.toMillis(REPORTED_FULL_HOLD) + 5_000,
      200
    )
    const again = await answer(server, "POST", "/api/v1/files", { labId, path: "/b.md", content: "b" })
    expect(again.status, again.body).toBe(201)
  })

  it("while writes are refused: webhook deliveries are heard, keys can be revoked, a key never used yet identifies", { timeout: 60_000 }, async () => {
    const db = await freshDatabase(url)
    cleanups.push(db.drop)
    const server = await startTestServer(db.settings)
    cleanups.push(server.close)
    const lab = await operatorOf(server).createLab("disk-exempt")
    const keyOf = async (name: string) => {
      const created = await answer(server, "POST", "/api/v1/auth/keys", { name, scopes: [`lab:${lab.slug}:r`] })
      expect(created.status, created.body).toBe(201)
      return (JSON.parse(created.body) as { data: { id: string; key: string } }).data
    }
    // neither used yet: the first request by either notes its use (an update of api_keys)
    const reader = await keyOf("reader")
    const stolen = await keyOf("stolen")

    await server.sql((sql) => sql.unsafe(DISK_FULL_TRIGGER + KEY_USE_DISK_FULL_TRIGGER))
    const failed = await answer(server, "POST", "/api/v1/files", { labId: lab.id, path: "/b.md", content: "b" })
    expect(failed.status, failed.body).toBe(507)
    // writes are refused now; a delivery only notes that a pull is wanted, and a refused one is not sent again
    const ping = { zen: "Keep it logically awesome.", hook_id: 1, repository: { full_name: "acme/none", clone_url: "https://example.com/acme/none.git" } }
    const delivery = await server.request("POST", "/api/webhooks/github", {
      body: JSON.stringify(ping),
      headers: {
        "content-type": "application/json",
        "x-github-event": "ping",
        "x-github-delivery": "ping-disk",
        "x-hub-signature-256": `sha256=${"0".repeat(64)}`
      }
    })
    expect(delivery.status, await delivery.text()).not.toBe(507)
    const revoked = await answer(server, "DELETE", `/api/v1/auth/keys?id=${stolen.id}`)
    expect(revoked.status, revoked.body).toBe(200)
    expect((await answerAs(server, stolen.key, "GET", "/api/v1/me")).status).toBe(401)
    // the reader's use cannot be noted (53100): it is identified without the note
    const me = await answerAs(server, reader.key, "GET", "/api/v1/me")
    expect(me.status, me.body).toBe(200)
    expect(JSON.parse(me.body)).toMatchObject({ data: { id: reader.id, kind: "api_key" } })
  })
})
