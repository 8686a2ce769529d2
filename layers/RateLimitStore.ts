import { RateLimiter } from "@effect/experimental"
import * as RedisRateLimiter from "@effect/experimental/RateLimiter/Redis"
import { Layer, Option } from "effect"

/** Counters in this process: right for one instance. */
export const memory = RateLimiter.layerStoreMemory

/** Counters in Redis: shared by every replica. */
export const redis = (url: URL) =>
  RedisRateLimiter.layerStore({
    host: url.hostname,
    port: url.port ? Number(url.port) : 6379,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
    tls: url.protocol === "rediss:" ? {} : undefined,
    prefix: "lab-service:ratelimit:",
    // fail fast when Redis is away: the limiter lets requests through rather than hang them
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 1_000
  })

/** The RateLimiter over Redis when a URL is given, in memory otherwise. */
export const layer = (redisUrl: Option.Option<URL>) =>
  RateLimiter.layer.pipe(Layer.provide(Option.match(redisUrl, { onNone: () => memory, onSome: redis })))
