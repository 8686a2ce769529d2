import { Effect, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { newApiKeySecret } from "../src/auth/Secrets.js"

/**
 * A secret from the environment, or else from DATA_DIR/<file>, generated there
 * (mode 0600) on first start. Returns the secret and whether it was just made.
 */
const fileSecret = (dataDir: string, file: string, fromEnv: Option.Option<Redacted.Redacted<string>>, generate: () => string) =>
  Option.match(fromEnv, {
    onSome: (secret) => Effect.succeed({ secret, path: Option.none<string>(), created: false }),
    onNone: () =>
      Effect.tryPromise({
        try: async () => {
          const path = join(dataDir, file)
          await mkdir(dataDir, { recursive: true, mode: 0o700 })
          const existing = await readFile(path, "utf8").then((s) => s.trim(), () => "")
          if (existing) return { secret: Redacted.make(existing), path: Option.some(path), created: false }
          const secret = generate()
          await writeFile(path, `${secret}\n`, { mode: 0o600, flag: "wx" })
          await chmod(path, 0o600)
          return { secret: Redacted.make(secret), path: Option.some(path), created: true }
        },
        catch: (cause) => new Error(`cannot read or create ${join(dataDir, file)}: ${String(cause)}`)
      })
  })

export const adminKey = (dataDir: string, fromEnv: Option.Option<Redacted.Redacted<string>>) =>
  fileSecret(dataDir, "admin-key", fromEnv, newApiKeySecret)

export const masterKey = (dataDir: string, fromEnv: Option.Option<Redacted.Redacted<string>>) =>
  fileSecret(dataDir, "master-key", fromEnv, () => randomBytes(32).toString("hex"))
