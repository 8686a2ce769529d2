/**
 * The Lab Service client. `LabServiceClient` and the types are generated
 * (src/generated/, by `npm run clients` in the service's repository); the
 * runtime it calls is written by hand (src/core/).
 */
export { LabServiceClient } from "./generated/client.js"
export type * from "./generated/types.js"
export * from "./core/errors.js"
export { Page, PagePromise, type ListMeta } from "./core/pagination.js"
export type { ClientOptions, RequestOptions } from "./core/transport.js"
