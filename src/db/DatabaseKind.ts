import { Context } from "effect"

/** Which database this instance runs on (GET /api/v1/status reports it): provided by the composition. */
export class DatabaseKind extends Context.Tag("DatabaseKind")<DatabaseKind, "postgresql" | "pglite">() {}
