import type { Step } from "./Step.js"
import { withConnectionRetry } from "../../db/ConnectionLoss.js"

/** A request that lost its database connection before anything of it was saved runs again (src/db/ConnectionLoss.ts). */
export const retryOnLostConnection: Step = (app) => withConnectionRetry(app)

/** For a body read as a stream, once: a lost connection is answered 503 and the sender sends it again. */
export const answerLostConnection: Step = (app) => withConnectionRetry(app, { retry: false })
