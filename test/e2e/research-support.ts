/**
 * Helpers of the end-to-end tests of agents, memory, knowledge, surveys,
 * standups, projects and chats: the shared lab fixture.
 */
export * from "../support/LabFixture.js"
