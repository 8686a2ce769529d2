import { Effect, Either, Option } from "effect"
import { createHash } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Me } from "../../src/auth/Api.js"
import { ApiKey, ApiKeyId, CreatedApiKey } from "../../src/auth/ApiKey.js"
import { Lab } from "../../src/labs/Lab.js"
import { Task } from "../../src/tasks/Task.js"
import { data, expectError, page } from "../support/http.js"
import { type SignOptions, startIdentityProvider, type TestIdentityProvider } from "../support/Jwks.js"
import { type KeyRequest, operatorOf } from "../support/LabFixture.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

// ---------------------------------------------------------------------------
// helpers

const sha256Hex = (value: string) => createHash("sha256").update(value).digest("hex")
const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, millis)))

/** Run a typed-client call and return its failure, or fail the test if it succeeded. */
const failureOf = async <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>): Promise<E> => {
  const result = await Effect.runPromise(Effect.either(effect))
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left
}

const createLab = (server: TestServer, slug: string, plan: "free" | "pro" | "team" = "team") =>
  operatorOf(server).createLab(slug, plan)

const createKey = (server: TestServer, token: string, body: KeyRequest) => operatorOf(server, token).createKey(body)

const createTask = async (server: TestServer, token: string, labId: string, title: string) =>
  data(await server.request("POST", "/api/v1/tasks", { token, json: { labId, title } }), Task, 201)

const listTasks = async (server: TestServer, token: string, labRef: string) =>
  (await page(await server.request("GET", `/api/v1/tasks?labId=${encodeURIComponent(labRef)}&limit=100`, { token }), Task)).data

const me = async (server: TestServer, token: string) => data(await server.request("GET", "/api/v1/me", { token }), Me)

const listKeys = async (server: TestServer, token: string) =>
  (await page(await server.request("GET", "/api/v1/auth/keys?limit=100", { token }), ApiKey)).data

const labSlugsSeenBy = async (server: TestServer, token: string) =>
  (await page(await server.request("GET", "/api/v1/labs?limit=100", { token }), Lab)).data.map((lab) => lab.slug).sort()


// ---------------------------------------------------------------------------
// API keys, scopes and labs on a server without JWT support

let server: TestServer
let alpha: Lab
let beta: Lab
let gamma: Lab
let alphaTask: Task
let betaTask: Task

beforeAll(async () => {
  server = await startTestServer()
  alpha = await createLab(server, "alpha")
  beta = await createLab(server, "beta")
  gamma = await createLab(server, "gamma", "free")
  alphaTask = await createTask(server, server.adminKey, alpha.id, "alpha public task")
  betaTask = await createTask(server, server.adminKey, beta.id, "beta confidential roadmap")
})
afterAll(() => server.close())

const adminKey = () => server.adminKey

describe("401 unauthorized", () => {
  const protectedRoutes = (): ReadonlyArray<readonly [string, string, unknown]> => [
    ["GET", "/api/v1/me", undefined],
    ["GET", "/api/v1/labs", undefined],
    ["GET", "/api/v1/auth/keys", undefined],
    ["POST", "/api/v1/auth/keys", { name: "sneaky", scopes: ["admin"] }],
    ["GET", `/api/v1/tasks?labId=${alpha.id}`, undefined],
    ["POST", "/api/v1/tasks", { labId: alpha.id, title: "sneaky" }]
  ]

  it("rejects a request without an Authorization header on every protected route", async () => {
    for (const [method, path, json] of protectedRoutes()) {
      const message = await expectError(await server.request(method, path, { json }), 401, "unauthorized")
      expect(message).toMatch(/credentials|Authorization/i)
    }
    // nothing was written by the attempts above
    expect((await listTasks(server, adminKey(), alpha.id)).map((t) => t.title)).not.toContain("sneaky")
    // the public route stays public
    expect((await server.request("GET", "/api/v1/status")).status).toBe(200)
  })

  it("rejects a malformed Authorization header, even around a valid key", async () => {
    const headers = ["Basic x", "Bearer", "Bearer ", "Bearer a b", `Basic ${adminKey()}`, `Bearer ${adminKey()} extra`, adminKey()]
    for (const authorization of headers) {
      const response = await server.request("GET", "/api/v1/me", { headers: { authorization } })
      expect(response.status, authorization).toBe(401)
      await expectError(response, 401, "unauthorized")
    }
    // the same key, properly presented, works
    expect((await me(server, adminKey())).kind).toBe("admin")
  })

  it("rejects unknown keys and tokens", async () => {
    const almostAdmin = `${adminKey().slice(0, -1)}${adminKey().endsWith("0") ? "1" : "0"}`
    for (const token of ["lsk_0123456789abcdefghijklmnopqrstuvwxyz0123", "not-a-key", almostAdmin, "a.b.c"]) {
      await expectError(await server.request("GET", "/api/v1/me", { token }), 401, "unauthorized")
      await expectError(await server.request("GET", `/api/v1/tasks?labId=${alpha.id}`, { token }), 401, "unauthorized")
    }
    const client = await server.client("lsk_0123456789abcdefghijklmnopqrstuvwxyz0123")
    expect((await failureOf(client.me.me()))._tag).toBe("Unauthorized")
    expect((await failureOf(client.tasks.list({ urlParams: { labId: alpha.id, limit: 100 } })))._tag).toBe(
      "Unauthorized"
    )
  })

  it("rejects a JWT when the instance has no JWKS configured", async () => {
    const provider = await startIdentityProvider()
    try {
      const token = await provider.sign({ claims: { scope: "lab:alpha:rw" } })
      await expectError(await server.request("GET", "/api/v1/me", { token }), 401, "unauthorized")
    } finally {
      await provider.close()
    }
  })

  it("rejects a key once it has expired", async () => {
    const expiresAt = new Date(Date.now() + 2_500)
    const key = await createKey(server, adminKey(), { name: "short-lived", scopes: ["lab:alpha:rw"], expiresAt: expiresAt.toISOString() })
    expect(key.expiresAt?.toISOString()).toBe(expiresAt.toISOString())
    const before = await me(server, key.key)
    expect(before).toMatchObject({ id: key.id, kind: "api_key" })
    expect(before.expiresAt?.toISOString()).toBe(expiresAt.toISOString())

    await sleep(expiresAt.getTime() - Date.now() + 300)

    await expectError(await server.request("GET", "/api/v1/me", { token: key.key }), 401, "unauthorized")
    await expectError(await server.request("GET", `/api/v1/tasks?labId=${alpha.id}`, { token: key.key }), 401, "unauthorized")
    await expectError(
      await server.request("POST", "/api/v1/tasks", { token: key.key, json: { labId: alpha.id, title: "too late" } }),
      401,
      "unauthorized"
    )
  })

  it("rejects a key right after it is revoked", async () => {
    const key = await createKey(server, adminKey(), { name: "to revoke", scopes: ["lab:alpha:rw"] })
    // used once, so any cache of verified keys holds it
    expect((await me(server, key.key)).id).toBe(key.id)
    expect(await listTasks(server, key.key, alpha.id)).toEqual(expect.arrayContaining([expect.objectContaining({ id: alphaTask.id })]))

    const revoked = await data(await server.request("DELETE", `/api/v1/auth/keys?id=${key.id}`, { token: adminKey() }), ApiKey)
    expect(revoked.id).toBe(key.id)
    expect(revoked.revokedAt).toBeInstanceOf(Date)

    await expectError(await server.request("GET", "/api/v1/me", { token: key.key }), 401, "unauthorized")
    await expectError(await server.request("GET", `/api/v1/tasks?labId=${alpha.id}`, { token: key.key }), 401, "unauthorized")
  })
})

describe("403 forbidden", () => {
  it("a read-only key reads its lab but cannot write to it", async () => {
    const key = await createKey(server, adminKey(), { name: "reader", scopes: ["lab:alpha:r"] })
    expect((await listTasks(server, key.key, alpha.id)).map((t) => t.id)).toContain(alphaTask.id)
    expect((await listTasks(server, key.key, "alpha")).map((t) => t.id)).toContain(alphaTask.id)

    await expectError(
      await server.request("POST", "/api/v1/tasks", { token: key.key, json: { labId: alpha.id, title: "written by a reader" } }),
      403,
      "forbidden"
    )
    await expectError(
      await server.request("DELETE", `/api/v1/tasks/${alphaTask.id}?labId=${alpha.id}`, { token: key.key }),
      403,
      "forbidden"
    )

    const client = await server.client(key.key)
    const failure = await failureOf(
      client.tasks.create({ payload: { labId: "alpha", title: "written by a reader", description: "", status: "todo" } })
    )
    expect(failure._tag).toBe("Forbidden")

    const titles = (await listTasks(server, adminKey(), alpha.id)).map((t) => t.title)
    expect(titles).toContain(alphaTask.title)
    expect(titles).not.toContain("written by a reader")
  })

  it("a key for lab A can neither read nor write lab B, by id or by slug, and sees none of B's data", async () => {
    const key = await createKey(server, adminKey(), { name: "alpha writer", scopes: ["lab:alpha:rw"] })
    for (const ref of [beta.id, beta.slug]) {
      const read = await server.request("GET", `/api/v1/tasks?labId=${ref}`, { token: key.key })
      const readText = await read.clone().text()
      await expectError(read, 403, "forbidden")
      expect(readText).not.toContain(betaTask.title)
      expect(readText).not.toContain(betaTask.id)

      await expectError(
        await server.request("POST", "/api/v1/tasks", { token: key.key, json: { labId: ref, title: "planted in beta" } }),
        403,
        "forbidden"
      )
      await expectError(await server.request("DELETE", `/api/v1/tasks/${betaTask.id}?labId=${ref}`, { token: key.key }), 403, "forbidden")
    }
    // B's task through A's lab: not found there, and not deleted
    await expectError(await server.request("DELETE", `/api/v1/tasks/${betaTask.id}?labId=${alpha.id}`, { token: key.key }), 404, "not_found")

    const client = await server.client(key.key)
    for (const ref of [beta.id, beta.slug]) {
      const failure = await failureOf(client.tasks.list({ urlParams: { labId: ref, limit: 100 } }))
      expect(failure._tag).toBe("Forbidden")
    }
    const own = await Effect.runPromise(client.tasks.list({ urlParams: { labId: alpha.slug, limit: 100 } }))
    expect(own.data.map((t) => t.labId)).toEqual(own.data.map(() => alpha.id))
    expect(own.data.map((t) => t.id)).not.toContain(betaTask.id)

    const betaTasks = await listTasks(server, adminKey(), beta.id)
    expect(betaTasks.map((t) => t.id)).toContain(betaTask.id)
    expect(betaTasks.map((t) => t.title)).not.toContain("planted in beta")
  })

  it("a non-admin asking for a lab that does not exist gets 403; the admin gets 404", async () => {
    const key = await createKey(server, adminKey(), { name: "alpha writer", scopes: ["lab:alpha:rw"] })
    // the refusal reads the same whether or not the lab exists
    const refusal = async (ref: string) =>
      (await expectError(await server.request("GET", `/api/v1/tasks?labId=${ref}`, { token: key.key }), 403, "forbidden")).replace(
        ref,
        "<ref>"
      )
    expect(await refusal("no-such-lab")).toBe(await refusal(beta.slug))
    expect(await refusal("lab_doesnotexist000000")).toBe(await refusal(beta.id))
    for (const ref of ["lab_doesnotexist000000", "no-such-lab"]) {
      await expectError(await server.request("GET", `/api/v1/tasks?labId=${ref}`, { token: key.key }), 403, "forbidden")
      await expectError(
        await server.request("POST", "/api/v1/tasks", { token: key.key, json: { labId: ref, title: "nowhere" } }),
        403,
        "forbidden"
      )
      await expectError(await server.request("GET", `/api/v1/tasks?labId=${ref}`, { token: adminKey() }), 404, "not_found")
      await expectError(
        await server.request("POST", "/api/v1/tasks", { token: adminKey(), json: { labId: ref, title: "nowhere" } }),
        404,
        "not_found"
      )
    }
  })

  it("only the admin may create labs", async () => {
    const writer = await createKey(server, adminKey(), { name: "alpha writer", scopes: ["lab:alpha:rw"] })
    await expectError(
      await server.request("POST", "/api/v1/labs", { token: writer.key, json: { slug: "rogue-lab", name: "Rogue", plan: "team" } }),
      403,
      "forbidden"
    )
    const client = await server.client(writer.key)
    const failure = await failureOf(client.labs.create({ payload: { slug: "rogue-lab-2", name: "Rogue", plan: "team" } }))
    expect(failure._tag).toBe("Forbidden")

    const slugs = await labSlugsSeenBy(server, adminKey())
    expect(slugs).not.toContain("rogue-lab")
    expect(slugs).not.toContain("rogue-lab-2")
  })
})

describe("API keys", () => {
  it("shows the full key once, and never the secret or its hash afterwards", async () => {
    const createResponse = await server.request("POST", "/api/v1/auth/keys", {
      token: adminKey(),
      json: { name: "ci deploy", scopes: ["lab:alpha:rw", "lab:beta:r"] }
    })
    const created = await data(createResponse, CreatedApiKey, 201)
    expect(created.key).toMatch(/^lsk_[0-9a-z]{20,}$/)
    expect(created.id).toMatch(/^key_/)
    expect(created.key.startsWith(created.prefix)).toBe(true)
    expect(created.prefix.length).toBeLessThan(created.key.length / 2)
    expect(created).toMatchObject({ name: "ci deploy", scopes: ["lab:alpha:rw", "lab:beta:r"], createdBy: "admin", revokedAt: null })

    // the key works
    expect(await me(server, created.key)).toMatchObject({ id: created.id, kind: "api_key", scopes: ["lab:alpha:rw", "lab:beta:r"] })

    const hash = sha256Hex(created.key)
    const listResponse = await server.request("GET", "/api/v1/auth/keys?limit=100", { token: adminKey() })
    const listText = await listResponse.clone().text()
    const listed = (await page(listResponse, ApiKey)).data.find((k) => k.id === created.id)
    expect(listed).toMatchObject({ id: created.id, name: "ci deploy", prefix: created.prefix })
    expect(listText).not.toContain(created.key)
    expect(listText).not.toContain(hash)
    expect(listText).not.toMatch(/"key"\s*:/)
    expect(listText).not.toMatch(/secret|hash/i)

    // the key itself listing its own record sees no secret either
    const ownText = await (await server.request("GET", "/api/v1/auth/keys", { token: created.key })).text()
    expect(ownText).toContain(created.id)
    expect(ownText).not.toContain(created.key)
    expect(ownText).not.toContain(hash)

    // stored as a SHA-256 hash only
    const rows = await server.sql((sql) => sql`SELECT * FROM api_keys WHERE id = ${created.id}`)
    expect(rows).toHaveLength(1)
    const stored = JSON.stringify(rows)
    expect(stored).toContain(hash)
    expect(stored).not.toContain(created.key)
  })

  it("creates keys only within the creator's own scopes", async () => {
    const reader = await createKey(server, adminKey(), { name: "reader", scopes: ["lab:alpha:r"] })
    const writer = await createKey(server, adminKey(), { name: "writer", scopes: ["lab:alpha:rw"] })

    // an :r key cannot mint an :rw key
    const escalation = await server.request("POST", "/api/v1/auth/keys", {
      token: reader.key,
      json: { name: "escalated", scopes: ["lab:alpha:rw"] }
    })
    expect(await expectError(escalation, 403, "forbidden")).toContain("lab:alpha:rw")

    // an :rw key can mint an :r key, which reads but cannot write
    const writerClient = await server.client(writer.key)
    const minted = (await Effect.runPromise(writerClient.keys.create({ payload: { name: "minted reader", scopes: ["lab:alpha:r"] } }))).data
    expect(minted).toMatchObject({ scopes: ["lab:alpha:r"], createdBy: writer.id })
    expect((await listTasks(server, minted.key, alpha.id)).map((t) => t.id)).toContain(alphaTask.id)
    await expectError(
      await server.request("POST", "/api/v1/tasks", { token: minted.key, json: { labId: alpha.id, title: "minted write" } }),
      403,
      "forbidden"
    )

    // a lab key cannot mint admin, another lab, or a mix that includes either
    for (const scopes of [["admin"], ["lab:beta:r"], ["lab:alpha:r", "lab:beta:r"], ["lab:alpha:r", "admin"]]) {
      await expectError(
        await server.request("POST", "/api/v1/auth/keys", { token: writer.key, json: { name: "too much", scopes } }),
        403,
        "forbidden"
      )
    }
    // nor outlive the key that creates it
    const mortal = await createKey(server, adminKey(), {
      name: "mortal",
      scopes: ["lab:alpha:rw"],
      expiresAt: new Date(Date.now() + 3_600_000).toISOString()
    })
    for (const expiresAt of [undefined, new Date(Date.now() + 7_200_000).toISOString()]) {
      await expectError(
        await server.request("POST", "/api/v1/auth/keys", {
          token: mortal.key,
          json: { name: "immortal", scopes: ["lab:alpha:r"], expiresAt }
        }),
        422,
        "validation_error"
      )
    }
    const adminAttempt = await failureOf(writerClient.keys.create({ payload: { name: "too much", scopes: ["admin"] } }))
    expect(adminAttempt._tag).toBe("Forbidden")

    // none of the refused keys exists
    const names = (await listKeys(server, adminKey())).map((k) => k.name)
    expect(names).not.toContain("escalated")
    expect(names).not.toContain("too much")
    expect(names).not.toContain("immortal")
  })

  it("rejects scopes naming an unknown lab, malformed scopes and a past expiry with 422", async () => {
    const unknownLab = await server.request("POST", "/api/v1/auth/keys", {
      token: adminKey(),
      json: { name: "ghost", scopes: ["lab:no-such-lab:rw"] }
    })
    expect(await expectError(unknownLab, 422, "validation_error")).toContain("no-such-lab")

    for (const scopes of [["lab:alpha:write"], ["lab:Alpha:rw"], ["superuser"], []]) {
      const response = await server.request("POST", "/api/v1/auth/keys", { token: adminKey(), json: { name: "bad scope", scopes } })
      expect(await expectError(response, 422, "validation_error")).toMatch(/scopes/)
    }

    const past = await server.request("POST", "/api/v1/auth/keys", {
      token: adminKey(),
      json: { name: "already dead", scopes: ["lab:alpha:r"], expiresAt: new Date(Date.now() - 60_000).toISOString() }
    })
    expect(await expectError(past, 422, "validation_error")).toMatch(/expiresAt/)

    const names = (await listKeys(server, adminKey())).map((k) => k.name)
    expect(names).not.toContain("ghost")
    expect(names).not.toContain("bad scope")
    expect(names).not.toContain("already dead")
  })

  it("shows a non-admin key only itself and the keys it created", async () => {
    const k1 = await createKey(server, adminKey(), { name: "k1", scopes: ["lab:alpha:rw"] })
    const k2 = await createKey(server, k1.key, { name: "k2", scopes: ["lab:alpha:r"] })
    const k3 = await createKey(server, k2.key, { name: "k3", scopes: ["lab:alpha:r"] })
    const other = await createKey(server, adminKey(), { name: "other", scopes: ["lab:alpha:rw"] })

    const ids = async (token: string) => {
      const client = await server.client(token)
      const listed = await Effect.runPromise(client.keys.list({ urlParams: { limit: 100 } }))
      return listed.data.map((k) => k.id).sort()
    }
    expect(await ids(k1.key)).toEqual([k1.id, k2.id].sort())
    expect(await ids(k2.key)).toEqual([k2.id, k3.id].sort())
    expect(await ids(k3.key)).toEqual([k3.id])
    expect(await ids(other.key)).toEqual([other.id])
    expect(await ids(adminKey())).toEqual(expect.arrayContaining([k1.id, k2.id, k3.id, other.id]))

    // a key cannot revoke what it cannot see: 404, and the key keeps working
    await expectError(await server.request("DELETE", `/api/v1/auth/keys?id=${other.id}`, { token: k1.key }), 404, "not_found")
    await expectError(await server.request("DELETE", `/api/v1/auth/keys?id=${k1.id}`, { token: k2.key }), 404, "not_found")
    expect((await me(server, other.key)).id).toBe(other.id)
    expect((await me(server, k1.key)).id).toBe(k1.id)

    // but it can revoke the keys it created
    const revoked = await data(await server.request("DELETE", `/api/v1/auth/keys?id=${k2.id}`, { token: k1.key }), ApiKey)
    expect(revoked.revokedAt).toBeInstanceOf(Date)
    await expectError(await server.request("GET", "/api/v1/me", { token: k2.key }), 401, "unauthorized")
  })

  it("revokes with DELETE, answering with the key; a second DELETE is harmless; an unknown id is 404", async () => {
    const key = await createKey(server, adminKey(), { name: "revoke me", scopes: ["lab:alpha:r"] })
    const client = await server.client(adminKey())

    const first = (await Effect.runPromise(client.keys.revoke({ urlParams: { id: key.id } }))).data
    expect(first).toMatchObject({ id: key.id, name: "revoke me", prefix: key.prefix, scopes: ["lab:alpha:r"] })
    expect(first.revokedAt).toBeInstanceOf(Date)
    expect(first).not.toHaveProperty("key")

    const secondResponse = await server.request("DELETE", `/api/v1/auth/keys?id=${key.id}`, { token: adminKey() })
    const secondText = await secondResponse.clone().text()
    const second = await data(secondResponse, ApiKey)
    expect(second.id).toBe(key.id)
    expect(second.revokedAt?.toISOString()).toBe(first.revokedAt?.toISOString())
    expect(secondText).not.toContain(key.key)

    const listed = (await listKeys(server, adminKey())).find((k) => k.id === key.id)
    expect(listed?.revokedAt?.toISOString()).toBe(first.revokedAt?.toISOString())
    await expectError(await server.request("GET", "/api/v1/me", { token: key.key }), 401, "unauthorized")

    await expectError(await server.request("DELETE", "/api/v1/auth/keys?id=key_doesnotexist0000", { token: adminKey() }), 404, "not_found")
    expect((await failureOf(client.keys.revoke({ urlParams: { id: ApiKeyId.make("key_doesnotexist0000") } })))._tag).toBe("NotFound")
  })

  it("lets a key revoke itself", async () => {
    const key = await createKey(server, adminKey(), { name: "self-destruct", scopes: ["lab:alpha:r"] })
    const client = await server.client(key.key)
    const revoked = (await Effect.runPromise(client.keys.revoke({ urlParams: { id: key.id } }))).data
    expect(revoked.revokedAt).toBeInstanceOf(Date)
    expect((await failureOf(client.me.me()))._tag).toBe("Unauthorized")
  })
})

describe("revoking a key revokes the keys it created", () => {
  it("revokes children and grandchildren at once, even while they are cached; siblings and the creator's creator stay", async () => {
    const stolen = await createKey(server, adminKey(), { name: "stolen", scopes: ["lab:alpha:rw"] })
    const sibling = await createKey(server, adminKey(), { name: "sibling", scopes: ["lab:alpha:rw"] })
    const child = await createKey(server, stolen.key, { name: "child", scopes: ["lab:alpha:rw"] })
    const otherChild = await createKey(server, stolen.key, { name: "other child", scopes: ["lab:alpha:r"] })
    const grandchild = await createKey(server, child.key, { name: "grandchild", scopes: ["lab:alpha:r"] })
    const descendants = [child, otherChild, grandchild]
    // each used, so any cache of verified keys holds it
    for (const key of [stolen, sibling, ...descendants]) expect((await me(server, key.key)).id).toBe(key.id)

    const revoked = await data(await server.request("DELETE", `/api/v1/auth/keys?id=${stolen.id}`, { token: adminKey() }), ApiKey)
    expect(revoked.revokedAt).toBeInstanceOf(Date)

    for (const key of [stolen, ...descendants]) {
      await expectError(await server.request("GET", "/api/v1/me", { token: key.key }), 401, "unauthorized")
      await expectError(await server.request("GET", `/api/v1/tasks?labId=${alpha.id}`, { token: key.key }), 401, "unauthorized")
      await expectError(
        await server.request("POST", "/api/v1/auth/keys", { token: key.key, json: { name: "heir", scopes: ["lab:alpha:r"] } }),
        401,
        "unauthorized"
      )
    }
    // the listing says so, for each of them
    const listed = new Map((await listKeys(server, adminKey())).map((k) => [k.id, k]))
    for (const key of descendants) expect(listed.get(key.id)?.revokedAt, key.name).toBeInstanceOf(Date)
    expect(listed.get(sibling.id)?.revokedAt).toBeNull()
    expect((await me(server, sibling.key)).id).toBe(sibling.id)
  })

  it("revokes what a key created when the key revokes one of its own children", async () => {
    const parent = await createKey(server, adminKey(), { name: "parent", scopes: ["lab:alpha:rw"] })
    const child = await createKey(server, parent.key, { name: "child", scopes: ["lab:alpha:rw"] })
    const grandchild = await createKey(server, child.key, { name: "grandchild", scopes: ["lab:alpha:r"] })
    expect((await me(server, grandchild.key)).id).toBe(grandchild.id)
    await data(await server.request("DELETE", `/api/v1/auth/keys?id=${child.id}`, { token: parent.key }), ApiKey)
    await expectError(await server.request("GET", "/api/v1/me", { token: grandchild.key }), 401, "unauthorized")
    expect((await me(server, parent.key)).id).toBe(parent.id)
  })

  it("refuses a key minted by an already revoked key (as another replica, still trusting its cache, could have)", async () => {
    const parent = await createKey(server, adminKey(), { name: "parent", scopes: ["lab:alpha:rw"] })
    await data(await server.request("DELETE", `/api/v1/auth/keys?id=${parent.id}`, { token: adminKey() }), ApiKey)
    // the replica's insert lands after the revocation: written here as that replica's statement would
    const secret = `lsk_minted_by_a_revoked_key_${Date.now()}`
    await server.sql((sql) =>
      sql`INSERT INTO api_keys (id, name, prefix, secret_hash, scopes, created_by, created_at)
          VALUES (${`key_late${Date.now()}`}, 'late child', ${secret.slice(0, 12)}, ${sha256Hex(secret)},
                  ${JSON.stringify(["lab:alpha:rw"])}::jsonb, ${parent.id}, now())`
    )
    await expectError(await server.request("GET", "/api/v1/me", { token: secret }), 401, "unauthorized")
    await expectError(await server.request("GET", `/api/v1/tasks?labId=${alpha.id}`, { token: secret }), 401, "unauthorized")
  })
})

describe("GET /labs", () => {
  it("lists only the labs a key's scopes name; the admin sees all", async () => {
    expect(await labSlugsSeenBy(server, adminKey())).toEqual(expect.arrayContaining(["alpha", "beta", "gamma"]))

    const alphaReader = await createKey(server, adminKey(), { name: "alpha reader", scopes: ["lab:alpha:r"] })
    expect(await labSlugsSeenBy(server, alphaReader.key)).toEqual(["alpha"])

    const two = await createKey(server, adminKey(), { name: "two labs", scopes: ["lab:alpha:r", "lab:gamma:rw"] })
    const client = await server.client(two.key)
    const labs = await Effect.runPromise(client.labs.list({ urlParams: { limit: 100 } }))
    expect(labs.data.map((lab) => lab.id).sort()).toEqual([alpha.id, gamma.id].sort())
    expect(labs.data.map((lab) => lab.id)).not.toContain(beta.id)
  })
})

// ---------------------------------------------------------------------------
// JWTs from an identity provider whose JWKS is served on loopback

describe("JWTs", () => {
  let provider: TestIdentityProvider
  let jwtServer: TestServer
  let labA: Lab
  let labB: Lab

  beforeAll(async () => {
    provider = await startIdentityProvider()
    jwtServer = await startTestServer({
      jwt: Option.some({
        jwksUrl: provider.jwksUrl,
        issuer: provider.issuer,
        audience: provider.audience,
        algorithms: ["RS256"],
        scopeClaim: "scope"
      })
    })
    labA = await createLab(jwtServer, "lab-a")
    labB = await createLab(jwtServer, "lab-b")
    await createTask(jwtServer, jwtServer.adminKey, labB.id, "lab b secret")
  })
  afterAll(async () => {
    await jwtServer.close()
    await provider.close()
  })

  it("accepts a valid token: /me says jwt with its scopes, and it can write its lab", async () => {
    const token = await provider.sign({ subject: "ada", claims: { scope: "lab:lab-a:rw", name: "Ada Lovelace" } })
    const client = await jwtServer.client(token)

    const who = (await Effect.runPromise(client.me.me())).data
    expect(who).toMatchObject({ kind: "jwt", name: "Ada Lovelace", scopes: ["lab:lab-a:rw"], plan: "team" })
    expect(who.id).toMatch(/^user_/)
    expect(who.expiresAt).toBeInstanceOf(Date)
    expect(provider.fetches()).toBeGreaterThan(0)

    const created = (
      await Effect.runPromise(
        client.tasks.create({ payload: { labId: labA.id, title: "from a JWT", description: "", status: "todo" } })
      )
    ).data
    expect(created.labId).toBe(labA.id)
    expect((await listTasks(jwtServer, jwtServer.adminKey, labA.id)).map((t) => t.id)).toContain(created.id)

    // the same subject with a fresh token is the same account
    const again = await provider.sign({ subject: "ada", claims: { scope: "lab:lab-a:r" } })
    expect((await me(jwtServer, again)).id).toBe(who.id)

    // a JWT's labs are those its scopes name
    expect(await labSlugsSeenBy(jwtServer, token)).toEqual(["lab-a"])
  })

  const flawed: ReadonlyArray<readonly [string, SignOptions]> = [
    ["the wrong audience", { audience: "some-other-service" }],
    ["the wrong issuer", { issuer: "https://evil.example/" }],
    ["an expiry in the past", { expiresIn: -60 }],
    ["no expiry at all", { expiresIn: null }],
    ["a key the JWKS does not list", { key: "unpublished" }],
    ["another key claiming the published kid", { key: "impostor" }],
    ["HS256 keyed with the published public key", { key: "hs256" }],
    ["no signature (alg none)", { key: "none" }]
  ]

  it.each(flawed)("rejects a token with %s with 401", async (_, options) => {
    const token = await provider.sign({ ...options, claims: { scope: "lab:lab-a:rw" } })
    await expectError(await jwtServer.request("GET", "/api/v1/me", { token }), 401, "unauthorized")
    await expectError(
      await jwtServer.request("POST", "/api/v1/tasks", { token, json: { labId: labA.id, title: "forged" } }),
      401,
      "unauthorized"
    )
    expect((await listTasks(jwtServer, jwtServer.adminKey, labA.id)).map((t) => t.title)).not.toContain("forged")
  })

  it("says why an expired token is refused", async () => {
    const token = await provider.sign({ expiresIn: -60, claims: { scope: "lab:lab-a:rw" } })
    expect(await expectError(await jwtServer.request("GET", "/api/v1/me", { token }), 401, "unauthorized")).toMatch(/expired/)
  })

  it("gives 403 to a read-only JWT that writes", async () => {
    const token = await provider.sign({ subject: "reader", claims: { scope: "lab:lab-a:r" } })
    expect((await listTasks(jwtServer, token, labA.slug)).every((t) => t.labId === labA.id)).toBe(true)
    await expectError(
      await jwtServer.request("POST", "/api/v1/tasks", { token, json: { labId: labA.id, title: "read-only write" } }),
      403,
      "forbidden"
    )
    const client = await jwtServer.client(token)
    const failure = await failureOf(
      client.tasks.create({ payload: { labId: labA.slug, title: "read-only write", description: "", status: "todo" } })
    )
    expect(failure._tag).toBe("Forbidden")
    expect((await listTasks(jwtServer, jwtServer.adminKey, labA.id)).map((t) => t.title)).not.toContain("read-only write")
  })

  it("gives 403 to a JWT for lab a reading or writing lab b", async () => {
    const token = await provider.sign({ subject: "ada", claims: { scope: "lab:lab-a:rw" } })
    for (const ref of [labB.id, labB.slug]) {
      const read = await jwtServer.request("GET", `/api/v1/tasks?labId=${ref}`, { token })
      const text = await read.clone().text()
      await expectError(read, 403, "forbidden")
      expect(text).not.toContain("lab b secret")
      await expectError(
        await jwtServer.request("POST", "/api/v1/tasks", { token, json: { labId: ref, title: "into b" } }),
        403,
        "forbidden"
      )
    }
    await expectError(await jwtServer.request("POST", "/api/v1/labs", { token, json: { slug: "jwt-lab", name: "J", plan: "free" } }), 403, "forbidden")
    expect((await listTasks(jwtServer, jwtServer.adminKey, labB.id)).map((t) => t.title)).not.toContain("into b")
  })
})
