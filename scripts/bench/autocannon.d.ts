/**
 * The part of autocannon's programmatic API that scripts/bench-http.ts uses
 * (autocannon ships no types). What it hands back is typed `unknown` on purpose:
 * the bench decodes results with effect Schema and checks event arguments at run time.
 */
declare module "autocannon" {
  interface AutocannonOptions {
    readonly url: string
    readonly connections?: number
    readonly duration?: number
    readonly method?: string
    readonly headers?: Readonly<Record<string, string>>
    readonly timeout?: number
    readonly pipelining?: number
  }

  interface AutocannonInstance {
    /** "response": (client, statusCode, resBytes, responseTime in ms, float). */
    on(event: "response", listener: (...args: ReadonlyArray<unknown>) => void): AutocannonInstance
    on(event: "reqError" | "error", listener: (error: unknown) => void): AutocannonInstance
    stop(): void
  }

  function autocannon(options: AutocannonOptions, callback: (error: unknown, result: unknown) => void): AutocannonInstance

  export default autocannon
}
