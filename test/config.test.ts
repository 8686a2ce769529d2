/**
 * Settings as an operator meets them: defaults, a clear error naming the
 * variable for every bad value (also from a real `npm start`-style process),
 * and the admin key bootstrapped into DATA_DIR.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Option, Redacted } from "effect"
import { spawn } from "node:child_process"
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Bootstrap from "../layers/Bootstrap.js"
import { AppConfig } from "../layers/Config.js"

const readConfig = (env: Record<string, string>) =>
  Effect.withConfigProvider(AppConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))

const MASTER_KEY = "0123456789abcdef".repeat(4)

describe("AppConfig", () => {
  it.effect("defaults: port 8080 on 0.0.0.0, data in ./data, embedded database", () =>
    Effect.gen(function* () {
      const config = yield* readConfig({})
      expect(config.port).toBe(8080)
      expect(config.host).toBe("0.0.0.0")
      expect(config.dataDir).toBe("./data")
      expect(config.databaseUrl).toEqual(Option.none())
      expect(config.redisUrl).toEqual(Option.none())
      expect(config.adminApiKey).toEqual(Option.none())
      expect(config.masterKey).toEqual(Option.none())
      expect(config.jwt.jwksUrl).toEqual(Option.none())
      expect(config.jwt.algorithms).toEqual(["RS256", "ES256"])
      expect(config.adminLimits).toEqual({ perMinute: 10_000, perDay: 10_000_000 })
      expect(config.redisRetryMillis).toBe(2_000)
      expect(config.connections).toEqual({ headersMillis: 10_000, requestMillis: 120_000, maxConnections: 10_000, maxPerAddress: 1_000 })
    })
  )

  it.effect("reads good values, keeping secrets redacted", () =>
    Effect.gen(function* () {
      const adminKey = "lsk_an_admin_key_long_enough_123"
      const config = yield* readConfig({
        PORT: "3000",
        HOST: "127.0.0.1",
        DATA_DIR: "/var/lib/lab",
        DATABASE_URL: "postgresql://lab:secret@db:5432/lab",
        ADMIN_API_KEY: adminKey,
        SECRETS_MASTER_KEY: MASTER_KEY,
        JWT_JWKS_URL: "https://idp.example/.well-known/jwks.json",
        JWT_ISSUER: "https://idp.example/",
        JWT_AUDIENCE: "lab-service",
        JWT_ALGORITHMS: "ES256, EdDSA",
        RATE_LIMIT_ADMIN_PER_MINUTE: "60"
      })
      expect(config).toMatchObject({ port: 3000, host: "127.0.0.1", dataDir: "/var/lib/lab" })
      expect(Option.map(config.databaseUrl, Redacted.value)).toEqual(Option.some("postgresql://lab:secret@db:5432/lab"))
      expect(String(config.databaseUrl)).not.toContain("secret")
      expect(Option.map(config.adminApiKey, Redacted.value)).toEqual(Option.some(adminKey))
      expect(Option.map(config.masterKey, Redacted.value)).toEqual(Option.some(MASTER_KEY))
      expect(Option.map(config.jwt.jwksUrl, (url) => url.href)).toEqual(Option.some("https://idp.example/.well-known/jwks.json"))
      expect(config.jwt.issuer).toEqual(Option.some("https://idp.example/"))
      expect(config.jwt.audience).toEqual(Option.some("lab-service"))
      expect(config.jwt.algorithms).toEqual(["ES256", "EdDSA"])
      expect(config.adminLimits).toEqual({ perMinute: 60, perDay: 10_000_000 })
    })
  )

  it.effect("slow git hosts: phase limits and job pools, by default and as set (issue 21 item 5)", () =>
    Effect.gen(function* () {
      expect((yield* readConfig({})).gitHosts).toEqual({
        timeoutMillis: 60_000,
        phases: { connectMillis: 10_000, responseMillis: 30_000, idleMillis: 30_000 },
        slots: { jobs: 2, retryJobs: 1, probes: 16, retryProbes: 4, stallMillis: 1_000 }
      })
      const set = yield* readConfig({ GIT_TIMEOUT_MS: "120000", GIT_IDLE_TIMEOUT_MS: "5000", GIT_PROBE_SLOTS: "32" })
      expect(set.gitHosts).toMatchObject({ timeoutMillis: 120_000, phases: { idleMillis: 5_000 }, slots: { probes: 32 } })
      expect(String(yield* Effect.flip(readConfig({ GIT_CONNECT_TIMEOUT_MS: "0" })))).toContain("GIT_CONNECT_TIMEOUT_MS")
    })
  )

  const bad: ReadonlyArray<{ readonly env: Record<string, string>; readonly names: ReadonlyArray<string>; readonly says: string }> = [
    { env: { PORT: "abc" }, names: ["PORT"], says: "abc" },
    { env: { PORT: "70000" }, names: ["PORT"], says: "70000" },
    { env: { DATABASE_URL: "mysql://x" }, names: ["DATABASE_URL"], says: "postgres://" },
    { env: { SECRETS_MASTER_KEY: "short" }, names: ["SECRETS_MASTER_KEY"], says: "64 hexadecimal" },
    { env: { SECRETS_MASTER_KEY: `${MASTER_KEY.slice(1)}g` }, names: ["SECRETS_MASTER_KEY"], says: "64 hexadecimal" },
    { env: { ADMIN_API_KEY: "lsk_too_short" }, names: ["ADMIN_API_KEY"], says: "at least 24" },
    { env: { JWT_JWKS_URL: "https://idp.example/jwks" }, names: ["JWT_JWKS_URL", "JWT_ISSUER", "JWT_AUDIENCE"], says: "needs" },
    {
      env: { JWT_JWKS_URL: "https://idp.example/jwks", JWT_ISSUER: "https://idp.example/" },
      names: ["JWT_JWKS_URL", "JWT_AUDIENCE"],
      says: "needs"
    },
    { env: { JWT_ALGORITHMS: "none" }, names: ["JWT_ALGORITHMS"], says: "none is never allowed" },
    { env: { JWT_ALGORITHMS: "RS256,HS256" }, names: ["JWT_ALGORITHMS"], says: "RS256" },
    { env: { RATE_LIMIT_ADMIN_PER_MINUTE: "0" }, names: ["RATE_LIMIT_ADMIN_PER_MINUTE"], says: "positive" },
    { env: { RATE_LIMIT_REDIS_RETRY_MS: "0" }, names: ["RATE_LIMIT_REDIS_RETRY_MS"], says: "positive" },
    { env: { HTTP_MAX_CONNECTIONS_PER_ADDRESS: "-1" }, names: ["HTTP_MAX_CONNECTIONS_PER_ADDRESS"], says: "positive" },
    {
      env: { HTTP_HEADERS_TIMEOUT_MS: "30000", HTTP_REQUEST_TIMEOUT_MS: "20000" },
      names: ["HTTP_HEADERS_TIMEOUT_MS", "HTTP_REQUEST_TIMEOUT_MS"],
      says: "must not exceed"
    }
  ]

  for (const { env, names, says } of bad) {
    it.effect(`rejects ${JSON.stringify(env)} naming ${names.join(", ")}`, () =>
      Effect.gen(function* () {
        const message = String(yield* Effect.flip(readConfig(env)))
        for (const name of names) expect(message).toContain(name)
        expect(message).toContain(says)
      })
    )
  }

  it.effect("does not echo a rejected secret back", () =>
    Effect.gen(function* () {
      const message = String(yield* Effect.flip(readConfig({ DATABASE_URL: "mysql://root:hunter2@db/lab" })))
      expect(message).toContain("DATABASE_URL")
      expect(message).not.toContain("hunter2")
    })
  )

  it.effect("reports every bad variable at once", () =>
    Effect.gen(function* () {
      const message = String(yield* Effect.flip(readConfig({ PORT: "abc", RATE_LIMIT_ADMIN_PER_MINUTE: "0" })))
      expect(message).toContain("PORT")
      expect(message).toContain("RATE_LIMIT_ADMIN_PER_MINUTE")
    })
  )
})

describe("npm start with a bad setting", () => {
  const root = fileURLToPath(new URL("..", import.meta.url))

  it("exits non-zero, names PORT, and writes no key", { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "lab-config-"))
    try {
      const dataDir = join(dir, "data")
      // a clean environment, so a developer's or CI's DATABASE_URL etc. play no part
      const child = spawn(join(root, "node_modules/.bin/tsx"), ["src/main.ts"], {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", HOME: dir, PORT: "abc", DATA_DIR: dataDir },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
      const code = await new Promise<number | null>((resolve, reject) => {
        child.on("error", reject)
        child.on("close", (exitCode) => resolve(exitCode))
      })
      expect(code).not.toBe(0)
      expect(code).not.toBeNull()
      expect(output).toContain("PORT")
      expect(output).toContain("abc")
      expect(await readdir(dir)).not.toContain("data")
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe("Bootstrap", () => {
  const withTempDir = <A, E>(f: (dir: string) => Effect.Effect<A, E>) =>
    Effect.acquireUseRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "lab-bootstrap-"))),
      f,
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    )

  it.effect("generates the admin key into DATA_DIR/admin-key with mode 0600, then reuses it", () =>
    withTempDir((dir) =>
      Effect.gen(function* () {
        const dataDir = join(dir, "data") // does not exist yet
        const first = yield* Bootstrap.adminKey(dataDir, Option.none())
        const path = join(dataDir, "admin-key")
        expect(first.created).toBe(true)
        expect(first.path).toEqual(Option.some(path))
        expect(Redacted.value(first.secret)).toMatch(/^lsk_[0-9a-z]{40}$/)

        const file = yield* Effect.promise(() => stat(path))
        expect(file.mode & 0o777).toBe(0o600)
        expect((yield* Effect.promise(() => readFile(path, "utf8"))).trim()).toBe(Redacted.value(first.secret))

        const second = yield* Bootstrap.adminKey(dataDir, Option.none())
        expect(second.created).toBe(false)
        expect(Redacted.value(second.secret)).toBe(Redacted.value(first.secret))
      })
    )
  )

  it.effect("ADMIN_API_KEY from the environment wins and writes no file", () =>
    withTempDir((dir) =>
      Effect.gen(function* () {
        const fromEnv = "lsk_from_the_environment_0123456789"
        const result = yield* Bootstrap.adminKey(dir, Option.some(Redacted.make(fromEnv)))
        expect(Redacted.value(result.secret)).toBe(fromEnv)
        expect(result.created).toBe(false)
        expect(result.path).toEqual(Option.none())
        expect(yield* Effect.promise(() => readdir(dir))).toEqual([])

        // even over a key file left by an earlier start
        yield* Effect.promise(() => writeFile(join(dir, "admin-key"), "lsk_old_generated_key\n", { mode: 0o600 }))
        const again = yield* Bootstrap.adminKey(dir, Option.some(Redacted.make(fromEnv)))
        expect(Redacted.value(again.secret)).toBe(fromEnv)
      })
    )
  )

  it.effect("the master key is generated the same way: 32 random bytes in hex, mode 0600, reused", () =>
    withTempDir((dir) =>
      Effect.gen(function* () {
        const first = yield* Bootstrap.masterKey(dir, Option.none())
        expect(Redacted.value(first.secret)).toMatch(/^[0-9a-f]{64}$/)
        expect((yield* Effect.promise(() => stat(join(dir, "master-key")))).mode & 0o777).toBe(0o600)
        const second = yield* Bootstrap.masterKey(dir, Option.none())
        expect(Redacted.value(second.secret)).toBe(Redacted.value(first.secret))
      })
    )
  )
})
