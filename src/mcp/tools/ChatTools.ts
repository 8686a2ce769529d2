import { Effect } from "effect"
import { AddMessage, Chat, ChatDetail, ChatId, ChatMessage, ChatQuery, CreateChat, PromoteChat, PromotionResult, UpdateChat } from "../../chats/Chat.js"
import { Chats } from "../../chats/Chats.js"
import { defineTool, toolInput, ToolPage, ToolPageOf } from "../McpTool.js"
import { listed } from "./Listing.js"

const { labId: _listLab, ...queryFields } = ChatQuery.fields
const { labId: _createLab, ...createFields } = CreateChat.fields
const { labId: _messageLab, ...messageFields } = AddMessage.fields
const { labId: _updateLab, ...updateFields } = UpdateChat.fields
const { labId: _promoteLab, ...promoteFields } = PromoteChat.fields

/** The chats tools: the lab's discussions and what they concluded, as `/api/v1/chats` serves them. */
export const chatTools = Effect.map(Chats, (chats) => [
  defineTool({
    name: "list_chats",
    toolset: "chats",
    access: "read",
    description: "List the lab's chats, newest first, without their messages (title, outcome, promotion, message count); optionally in a time range.",
    input: toolInput({ ...queryFields, ...ToolPage }),
    output: ToolPageOf(Chat),
    run: listed(chats.list)
  }),
  defineTool({
    name: "get_chat",
    toolset: "chats",
    access: "read",
    description: "Read one chat (chat_…) with its messages in order, to catch up on a discussion before adding to it.",
    input: toolInput({ chatId: ChatId }),
    output: ChatDetail,
    run: ({ chatId }, call) => chats.get(call.labId, chatId)
  }),
  defineTool({
    name: "create_chat",
    toolset: "chats",
    access: "write",
    description: "Open a chat (optionally titled) to discuss a question in the lab; then add messages with add_chat_message.",
    input: toolInput(createFields),
    output: Chat,
    run: (input, call) => chats.create(call.labId, input, call.actor)
  }),
  defineTool({
    name: "add_chat_message",
    toolset: "chats",
    access: "write",
    description: "Append a message (role user, assistant or tool) to a chat; messages keep the order they arrive in.",
    input: toolInput({ chatId: ChatId, ...messageFields }),
    output: ChatMessage,
    run: ({ chatId, role, content }, call) => chats.addMessage(call.labId, chatId, { role, content }, call.actor)
  }),
  defineTool({
    name: "update_chat",
    toolset: "chats",
    access: "write",
    description:
      "Set a chat's title or its outcome (the conclusion, in markdown; null clears it). Write the outcome before promote_chat; it is frozen once the chat is promoted.",
    input: toolInput({ chatId: ChatId, ...updateFields }),
    output: ChatDetail,
    hints: { destructive: true, idempotent: true },
    run: ({ chatId, labId: _labId, ...patch }, call) => chats.update(call.labId, chatId, patch, call.actor)
  }),
  defineTool({
    name: "promote_chat",
    toolset: "chats",
    access: "write",
    description:
      "Turn a chat's outcome into a knowledge entry or a task, once: refused as a conflict when the chat has no outcome or was promoted already.",
    input: toolInput({ chatId: ChatId, ...promoteFields }),
    output: PromotionResult,
    run: ({ chatId, labId: _labId, ...input }, call) => chats.promote(call.labId, chatId, input, call.actor)
  })
])
