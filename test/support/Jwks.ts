import { type CryptoKey, exportJWK, exportSPKI, generateKeyPair, type JWTPayload, SignJWT, UnsecuredJWT } from "jose"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/** An identity provider in miniature: a JWKS served on loopback and a signer for its tokens. */
export interface TestIdentityProvider {
  readonly jwksUrl: URL
  readonly issuer: string
  readonly audience: string
  /** How many times the JWKS has been fetched. */
  readonly fetches: () => number
  /**
   * A signed JWT. By default: RS256 with the published key, this provider's
   * issuer and audience, `sub`, and an `exp` an hour ahead.
   */
  readonly sign: (options?: SignOptions) => Promise<string>
  readonly close: () => Promise<void>
}

export interface SignOptions {
  readonly subject?: string
  /** Extra claims, `scope` for instance. */
  readonly claims?: JWTPayload
  readonly issuer?: string
  readonly audience?: string
  /** Seconds from now (negative for a token that has expired); `null` for no `exp` at all. */
  readonly expiresIn?: number | null
  /**
   * `published`: the key in the JWKS. `unpublished`: another RSA key with a kid
   * the JWKS does not list. `impostor`: another RSA key that claims the
   * published key's kid. `hs256`: HMAC with the published public key (PEM) as
   * the secret, the classic algorithm-confusion forgery. `none`: an unsigned
   * token (`alg: none`).
   */
  readonly key?: "published" | "unpublished" | "impostor" | "hs256" | "none"
}

const KID = "test-key-1"

export const startIdentityProvider = async (): Promise<TestIdentityProvider> => {
  const published = await generateKeyPair("RS256", { extractable: true })
  const other = await generateKeyPair("RS256", { extractable: true })
  const publicJwk = { ...(await exportJWK(published.publicKey)), kid: KID, alg: "RS256", use: "sig" }
  const publicPem = new TextEncoder().encode(await exportSPKI(published.publicKey))
  const body = JSON.stringify({ keys: [publicJwk] })

  let fetches = 0
  const server: Server = createServer((request, response) => {
    if (request.method === "GET" && request.url === "/.well-known/jwks.json") {
      fetches++
      response.writeHead(200, { "content-type": "application/json" })
      response.end(body)
    } else {
      response.writeHead(404)
      response.end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address: AddressInfo | string | null = server.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  const origin = `http://127.0.0.1:${address.port}`
  const issuer = `${origin}/`
  const audience = "lab-service-test"

  const sign = async (options: SignOptions = {}): Promise<string> => {
    const key = options.key ?? "published"
    const now = Math.floor(Date.now() / 1000)
    const expiresIn = options.expiresIn === undefined ? 3600 : options.expiresIn
    const claims: JWTPayload = {
      ...options.claims,
      sub: options.subject ?? "user-1",
      iss: options.issuer ?? issuer,
      aud: options.audience ?? audience,
      iat: now - 5,
      ...(expiresIn === null ? {} : { exp: now + expiresIn })
    }
    if (key === "none") return new UnsecuredJWT(claims).encode()
    const jwt = new SignJWT(claims)
    const signing: { readonly alg: string; readonly kid: string; readonly secret: CryptoKey | Uint8Array } =
      key === "published"
        ? { alg: "RS256", kid: KID, secret: published.privateKey }
        : key === "unpublished"
          ? { alg: "RS256", kid: "not-in-the-jwks", secret: other.privateKey }
          : key === "impostor"
            ? { alg: "RS256", kid: KID, secret: other.privateKey }
            : { alg: "HS256", kid: KID, secret: publicPem }
    return jwt.setProtectedHeader({ alg: signing.alg, kid: signing.kid, typ: "JWT" }).sign(signing.secret)
  }

  return {
    jwksUrl: new URL(`${origin}/.well-known/jwks.json`),
    issuer,
    audience,
    fetches: () => fetches,
    sign,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      })
  }
}
