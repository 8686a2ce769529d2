import { Either, Option } from "effect"
import { BlockList, isIP } from "node:net"

/**
 * Where git traffic may go. A tenant chooses the repository URL, so by default
 * only public addresses are reached; the operator opens exceptions with
 * GIT_ALLOWED_HOSTS (host names, IP literals, CIDR blocks, each with an
 * optional port). Pure rules: resolving names and connecting are the git
 * layer's (layers/git/Transport.ts), which applies these to every address it
 * connects to.
 */

/** Ranges that are never public: [first address, prefix length, what it is]. */
const REFUSED_V4: ReadonlyArray<readonly [string, number, string]> = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared (carrier-grade NAT)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"]
]

/** IPv6: only global unicast (2000::/3) is public, minus these. */
const REFUSED_V6_IN_GLOBAL: ReadonlyArray<readonly [string, number, string]> = [
  ["2001::", 23, "reserved"],
  ["2001:db8::", 32, "documentation"],
  ["2002::", 16, "6to4 (embeds an IPv4 address)"],
  ["3fff::", 20, "documentation"]
]
const NAMED_V6: ReadonlyArray<readonly [string, number, string]> = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["::ffff:0:0", 96, "IPv4-mapped"],
  ["64:ff9b::", 96, "NAT64 (embeds an IPv4 address)"],
  ["64:ff9b:1::", 48, "NAT64 (embeds an IPv4 address)"],
  ["fc00::", 7, "unique-local"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local"],
  ["ff00::", 8, "multicast"]
]

const listOf = (ranges: ReadonlyArray<readonly [string, number, string]>, family: "ipv4" | "ipv6") =>
  ranges.map(([address, prefix, what]) => {
    const list = new BlockList()
    list.addSubnet(address, prefix, family)
    return { list, what }
  })

const v4 = listOf(REFUSED_V4, "ipv4")
const v6Named = listOf(NAMED_V6, "ipv6")
const v6InGlobal = listOf(REFUSED_V6_IN_GLOBAL, "ipv6")
const globalUnicast = listOf([["2000::", 3, "global unicast"]], "ipv6")[0]

/** An address without brackets: `[::1]` -> `::1`. */
const bare = (host: string) => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host)

/** Why an IP address is not public (loopback, private, …); None when it is public. */
export const nonPublicReason = (address: string): Option.Option<string> => {
  const ip = bare(address)
  const family = isIP(ip)
  if (family === 4) return Option.fromNullable(v4.find((r) => r.list.check(ip, "ipv4"))?.what)
  if (family !== 6) return Option.some("not an IP address")
  const named = v6Named.find((r) => r.list.check(ip, "ipv6"))
  if (named) return Option.some(named.what)
  if (!globalUnicast?.list.check(ip, "ipv6")) return Option.some("reserved")
  return Option.fromNullable(v6InGlobal.find((r) => r.list.check(ip, "ipv6"))?.what)
}

/** GIT_ALLOWED_HOSTS, parsed. */
export interface AllowedHosts {
  /** Host names (lower case, no trailing dot) and the port they are allowed on (undefined: any). */
  readonly names: ReadonlyArray<{ readonly name: string; readonly port: number | undefined }>
  /** IP literals and CIDR blocks, with a port (undefined: any). */
  readonly blocks: ReadonlyArray<{ readonly list: BlockList; readonly family: "ipv4" | "ipv6"; readonly port: number | undefined }>
  /** The setting as given, for messages. */
  readonly source: string
}

export const NO_EXCEPTIONS: AllowedHosts = { names: [], blocks: [], source: "" }

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/

const parsePort = (text: string | undefined): Either.Either<number | undefined, string> => {
  if (text === undefined) return Either.right(undefined)
  const port = Number(text)
  return /^\d{1,5}$/.test(text) && port >= 1 && port <= 65_535 ? Either.right(port) : Either.left(`bad port ${text}`)
}

/** Lower case, no trailing dot: how a name is compared. */
export const canonicalName = (host: string): string => host.toLowerCase().replace(/\.$/, "")

type Entry = Partial<Omit<AllowedHosts, "source">>

const parseEntry = (raw: string): Either.Either<Entry, string> => {
  const entry = raw.trim()
  // CIDR: 10.0.0.0/8, fd00::/8 (no port)
  const cidr = /^\[?([0-9a-fA-F:.]+)\]?\/(\d{1,3})$/.exec(entry)
  if (cidr) {
    const [, address = "", prefixText = ""] = cidr
    const family = isIP(address)
    const prefix = Number(prefixText)
    if (family === 0 || prefix > (family === 4 ? 32 : 128)) return Either.left(`${entry} is not a CIDR block`)
    const list = new BlockList()
    const kind = family === 4 ? "ipv4" : "ipv6"
    list.addSubnet(address, prefix, kind)
    return Either.right({ blocks: [{ list, family: kind, port: undefined }] })
  }
  // [v6]:port, [v6], v4:port, v4, name:port, name; a bare v6 literal takes no port
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry)
  const plain = bracketed ? undefined : isIP(entry) === 6 ? [entry, entry, undefined] : /^([^:]+)(?::(\d+))?$/.exec(entry)
  const match = bracketed ?? plain
  if (!match) return Either.left(`${entry} is not host[:port], an IP address or a CIDR block`)
  const [, host = "", portText] = match
  return Either.flatMap(parsePort(portText), (port): Either.Either<Entry, string> => {
    const family = isIP(host)
    if (family !== 0) {
      const list = new BlockList()
      const kind = family === 4 ? "ipv4" : "ipv6"
      list.addAddress(host, kind)
      return Either.right({ blocks: [{ list, family: kind, port }] })
    }
    const name = canonicalName(host)
    return HOST_NAME.test(name) ? Either.right({ names: [{ name, port }] }) : Either.left(`${entry} is not a host name`)
  })
}

/** Parse GIT_ALLOWED_HOSTS: comma-separated `host[:port]`, IP literals (`[v6]:port`) or CIDR blocks. */
export const parseAllowedHosts = (text: string): Either.Either<AllowedHosts, string> => {
  const entries = text.split(",").map((s) => s.trim()).filter((s) => s.length > 0)
  return Either.map(Either.all(entries.map(parseEntry)), (parts) => ({
    names: parts.flatMap((p) => p.names ?? []),
    blocks: parts.flatMap((p) => p.blocks ?? []),
    source: entries.join(",")
  }))
}

/** The port a URL connects to. */
export const portOf = (url: URL): number => (url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80)

/** Does the operator allow this host name (as the URL names it) on this port? Then any address it resolves to is reached. */
export const isAllowedName = (allowed: AllowedHosts, host: string, port: number): boolean => {
  const name = canonicalName(host)
  return allowed.names.some((n) => n.name === name && (n.port === undefined || n.port === port))
}

/** May git traffic go to this address and port? Public addresses may; others only when the operator allows them. */
export const addressVerdict = (allowed: AllowedHosts, address: string, port: number): Either.Either<void, string> => {
  const ip = bare(address)
  const reason = nonPublicReason(ip)
  if (Option.isNone(reason)) return Either.void
  const family = isIP(ip) === 4 ? "ipv4" : "ipv6"
  const opened = allowed.blocks.some((b) => b.family === family && b.list.check(ip, family) && (b.port === undefined || b.port === port))
  return opened
    ? Either.void
    : Either.left(`${address} is a ${reason.value} address; the operator can allow it with GIT_ALLOWED_HOSTS`)
}

/** Names that always mean this machine (RFC 6761), refused before any lookup. */
const isLocalName = (name: string) => name === "localhost" || name.endsWith(".localhost")

/**
 * The checks that need no lookup: an IP literal host must be allowed; a
 * `localhost` name is refused unless allowed by name. Right(true) when the
 * host is a name still to be resolved and checked; Right(false) when decided.
 */
export const literalVerdict = (allowed: AllowedHosts, url: URL): Either.Either<boolean, string> => {
  const host = url.hostname
  const port = portOf(url)
  if (isIP(bare(host)) !== 0) return Either.map(addressVerdict(allowed, host, port), () => false)
  if (isAllowedName(allowed, host, port)) return Either.right(false)
  if (isLocalName(canonicalName(host))) return Either.left(`${host} is this machine; the operator can allow it with GIT_ALLOWED_HOSTS`)
  return Either.right(true)
}
