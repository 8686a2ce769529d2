/** The chats tables (part of the research-resources migration; see src/db/Migrations.ts). */
export const schema = `
CREATE TABLE chats (
  id text PRIMARY KEY,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  title text,
  outcome text,
  promoted_as text CHECK (promoted_as IN ('knowledge', 'task')),
  promoted_ref text,
  promoted_at timestamptz,
  message_count integer NOT NULL DEFAULT 0,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX chats_lab_created ON chats (lab_id, created_at DESC, id DESC);

CREATE TABLE chat_messages (
  id text PRIMARY KEY,
  chat_id text NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
  lab_id text NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  role text NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
  content text NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (chat_id, seq)
);
`
