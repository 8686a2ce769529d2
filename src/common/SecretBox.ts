import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"

/**
 * Encrypts secrets at rest (git tokens, webhook secrets) with AES-256-GCM under
 * the operator's master key. Sealed values are `v1:<iv>:<tag>:<ciphertext>` in base64url.
 */
export class SecretBox extends Context.Tag("SecretBox")<
  SecretBox,
  {
    readonly seal: (plaintext: string) => string
    readonly open: (sealed: string) => Effect.Effect<string, SecretBoxError>
  }
>() {
  /** `key` is 32 bytes as 64 hex characters. */
  static readonly layer = (key: Redacted.Redacted<string>) =>
    Layer.sync(SecretBox, () => {
      const k = Buffer.from(Redacted.value(key), "hex")
      return {
        seal: (plaintext) => {
          const iv = randomBytes(12)
          const cipher = createCipheriv("aes-256-gcm", k, iv)
          const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
          return ["v1", iv, cipher.getAuthTag(), data].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(":")
        },
        open: (sealed) =>
          Effect.try({
            try: () => {
              const [version, iv, tag, data] = sealed.split(":")
              if (version !== "v1" || !iv || !tag || data === undefined) throw new Error("not a sealed value")
              const decipher = createDecipheriv("aes-256-gcm", k, Buffer.from(iv, "base64url"))
              decipher.setAuthTag(Buffer.from(tag, "base64url"))
              return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString("utf8")
            },
            catch: () => new SecretBoxError({ message: "cannot open a sealed secret: wrong master key or corrupt value" })
          })
      }
    })
}

export class SecretBoxError extends Schema.TaggedError<SecretBoxError>()("SecretBoxError", { message: Schema.String }) {}
