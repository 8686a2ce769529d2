/**
 * Helpers of the end-to-end tests of telemetry, contributions, backups and
 * search: the shared lab fixture.
 */
export * from "../support/LabFixture.js"
