/**
 * A JWT's claims are client input too: a subject or name the database cannot store as it is (NUL, a lone UTF-16
 * surrogate) and an expiry JavaScript cannot hold are refused with 401, never a 500, and subjects that differ stay
 * different users. On PGlite; on PostgreSQL too with DATABASE_URL or E2E_DATABASE_URL (a fresh schema).
 */
import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Me } from "../../src/auth/Api.js"
import { data, expectError } from "../support/http.js"
import { startIdentityProvider, type TestIdentityProvider } from "../support/Jwks.js"
import { freshDatabase, operatorOf } from "../support/LabFixture.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

const suite = (name: string, databaseUrl: string | undefined) =>
  describe(`JWT claims on ${name}`, () => {
    let provider: TestIdentityProvider
    let server: TestServer
    let drop: () => Promise<void> = async () => {}

    beforeAll(async () => {
      provider = await startIdentityProvider()
      const db = await freshDatabase(databaseUrl)
      drop = db.drop
      server = await startTestServer({
        ...db.settings,
        jwt: Option.some({
          jwksUrl: provider.jwksUrl,
          issuer: provider.issuer,
          audience: provider.audience,
          algorithms: ["RS256"],
          scopeClaim: "scope"
        })
      })
      await operatorOf(server).createLab("claims-lab")
    }, 60_000)
    afterAll(async () => {
      await server?.close()
      await provider?.close()
      await drop()
    })

    const me = (token: string) => server.request("GET", "/api/v1/me", { token })

    it.each([
      ["a NUL in its sub", { subject: "a\u0000b" }],
      ["a NUL in its name", { claims: { name: "Ada\u0000" } }],
      ["a lone high surrogate in its sub", { subject: "a\ud800b" }],
      ["a lone low surrogate in its sub", { subject: "a\udc00b" }],
      ["a lone surrogate in its name", { claims: { name: "Ada \ud801" } }],
      ["an expiry past year 9999", { expiresIn: 1e15 - Math.floor(Date.now() / 1000) }]
    ])("refuses a token with %s with 401", async (_, options) => {
      const token = await provider.sign({ ...options, claims: { scope: "lab:claims-lab:rw", ...("claims" in options ? options.claims : {}) } })
      await expectError(await me(token), 401, "unauthorized")
      // minting a key takes its expiry from the token's when none is given
      await expectError(
        await server.request("POST", "/api/v1/auth/keys", { token, json: { name: "k", scopes: ["lab:claims-lab:r"] } }),
        401,
        "unauthorized"
      )
    })

    it("keeps subjects that differ in one character different users", async () => {
      const ids = new Set<string>()
      for (const subject of ["a\ufffdb", "a?b", "ab", "a\u{1F600}b"]) {
        const token = await provider.sign({ subject, claims: { scope: "lab:claims-lab:r" } })
        ids.add((await data(await me(token), Me)).id)
      }
      expect(ids.size).toBe(4)
      for (const subject of ["a\ud800b", "a\ud801b"]) {
        await expectError(await me(await provider.sign({ subject })), 401, "unauthorized")
      }
    })

    it("still accepts an ordinary token with a name in any script", async () => {
      const token = await provider.sign({ subject: "ada", claims: { scope: "lab:claims-lab:rw", name: "Ada Lovelace 漢字 🧪" } })
      expect((await data(await me(token), Me)).name).toBe("Ada Lovelace 漢字 🧪")
    })
  })

const postgresUrl = process.env["E2E_DATABASE_URL"] ?? process.env["DATABASE_URL"]

suite("pglite", undefined)
if (postgresUrl !== undefined && postgresUrl !== "") suite("postgresql", postgresUrl)
