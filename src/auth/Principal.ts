import { Context, Schema } from "effect"

/**
 * Scopes: `admin` (the instance operator), `lab:<slug>:rw` (read and write a
 * lab), `lab:<slug>:r` (read only).
 */
export const ScopeString = Schema.String.pipe(
  Schema.pattern(/^(admin|lab:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?:(rw|r))$/, {
    message: () => "must be admin, lab:<slug>:rw or lab:<slug>:r"
  })
).annotations({ identifier: "Scope", description: "admin | lab:<slug>:rw | lab:<slug>:r" })

export type Access = "read" | "write"

export type Scope =
  | { readonly kind: "admin" }
  | { readonly kind: "lab"; readonly slug: string; readonly access: "rw" | "r" }

export const parseScope = (scope: string): Scope | undefined => {
  if (scope === "admin") return { kind: "admin" }
  const match = /^lab:([a-z0-9-]+):(rw|r)$/.exec(scope)
  return match && match[1] && (match[2] === "rw" || match[2] === "r")
    ? { kind: "lab", slug: match[1], access: match[2] }
    : undefined
}

export type PrincipalKind = "admin" | "api_key" | "jwt"

/** Who is calling: the credential (or JWT subject) a request was authenticated with. */
export interface Principal {
  /** The account the rate limits count against: a key id, a user id, or `admin`. */
  readonly id: string
  readonly kind: PrincipalKind
  readonly name: string
  readonly scopes: ReadonlyArray<string>
  /** When the credential stops working, if it does. */
  readonly expiresAt: Date | null
}

export class CurrentPrincipal extends Context.Tag("CurrentPrincipal")<CurrentPrincipal, Principal>() {}

// principals are made once per credential and cached (admin, keys, JWTs): parse their scopes once too
const parsedScopes = new WeakMap<Principal, ReadonlyArray<Scope>>()

const scopesOf = (principal: Principal): ReadonlyArray<Scope> => {
  let scopes = parsedScopes.get(principal)
  if (scopes === undefined) {
    scopes = principal.scopes.flatMap((s) => {
      const scope = parseScope(s)
      return scope ? [scope] : []
    })
    parsedScopes.set(principal, scopes)
  }
  return scopes
}

export const isAdmin = (principal: Principal): boolean => scopesOf(principal).some((s) => s.kind === "admin")

/** May this principal read (or write) the lab with this slug? */
export const canAccess = (principal: Principal, slug: string, access: Access): boolean =>
  scopesOf(principal).some(
    (s) => s.kind === "admin" || (s.slug === slug && (access === "read" || s.access === "rw"))
  )

/** The slugs named in the principal's lab scopes. */
export const labSlugs = (principal: Principal): ReadonlyArray<string> => [
  ...new Set(scopesOf(principal).flatMap((s) => (s.kind === "lab" ? [s.slug] : [])))
]

/** May this principal grant `requested` to a new key? A key grants only what it holds. */
export const covers = (principal: Principal, requested: string): boolean => {
  const scope = parseScope(requested)
  if (!scope) return false
  if (isAdmin(principal)) return true
  if (scope.kind === "admin") return false
  return canAccess(principal, scope.slug, scope.access === "rw" ? "write" : "read")
}
