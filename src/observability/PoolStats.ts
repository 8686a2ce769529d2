import { Context, type Option } from "effect"

export interface PoolUse {
  readonly total: number
  readonly idle: number
  readonly waiting: number
}

/** The database pool's connections now (GET /metrics); none on the embedded database, which has no pool. */
export class PoolStats extends Context.Tag("PoolStats")<PoolStats, () => Option.Option<PoolUse>>() {}
