/** The projects tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = ``
