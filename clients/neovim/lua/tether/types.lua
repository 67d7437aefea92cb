--- Wire types of the Tether protocol (docs/protocol.md), for LuaCATS only: this module has no code.
---@meta

---@alias tether.StopReason "end_turn"|"max_tokens"|"max_turn_requests"|"cancelled"|"refusal"|"error"
---@alias tether.ToolStatus "pending"|"in_progress"|"completed"|"failed"

---@class tether.ContentBlock
---@field type "text"|"resource_link"|"image"
---@field text? string
---@field uri? string
---@field range? lsp.Range
---@field name? string

---@class tether.ToolContent
---@field type "text"|"diff"|"terminal"
---@field text? string
---@field uri? string
---@field oldText? string
---@field newText? string
---@field line? integer Zero-based line where a big file's diff region starts (absent: whole texts).
---@field output? string
---@field exitCode? integer

---@class tether.PlanEntry
---@field content string
---@field status "pending"|"in_progress"|"completed"
---@field activeForm? string

---@class tether.Usage
---@field inputTokens integer
---@field outputTokens integer
---@field cacheReadTokens integer
---@field cacheCreationTokens integer
---@field costUsd? number
---@field contextTokens? integer
---@field contextWindow? integer

---@class tether.SessionUpdate
---@field kind string See docs/protocol.md: user_message, agent_message_chunk, tool_call, plan, usage, turn_end, …
---@field turnId? string (history entries of loadSession)
---@field content? tether.ContentBlock[]|tether.ToolContent[]
---@field text? string
---@field toolCallId? string
---@field title? string
---@field toolKind? string
---@field status? string
---@field rawInput? table
---@field rawOutput? any
---@field locations? {uri: string, line?: integer}[]
---@field entries? tether.PlanEntry[]
---@field taskId? string
---@field description? string
---@field summary? string
---@field stopReason? tether.StopReason
---@field error? {code: string, message: string}
---@field rejected? "user"|"rule"|"hook"|"mode" A tool call that did not run because it was rejected.
---@field level? "info"|"warning"|"error"
---@field message? string
---@field mode? tether.Mode
---@field trigger? string
---@field tokensBefore? integer
---@field tokensAfter? integer

---@class tether.LoadSessionResult
---@field sessionId string
---@field history tether.SessionUpdate[]
---@field rewound? {at: integer, turnId: string, restored: string[], history: tether.SessionUpdate[]}[] Rewound turns.
---@field title? string
---@field turns? integer Live turns (rewound ones do not count).
---@field usage? tether.Usage Session totals.
---@field mode? tether.Mode

---@class tether.PromptResult
---@field stopReason tether.StopReason
---@field turnId string
---@field usage tether.Usage
---@field error? {code: string, message: string}

---@class tether.SessionInfo
---@field sessionId string
---@field title? string
---@field workspaceFolder? string
---@field createdAt string
---@field updatedAt string
---@field turns integer

---@class tether.PermissionOption
---@field optionId string
---@field name string
---@field kind "allow_once"|"allow_always"|"reject_once"|"reject_always"
---@field rule? string The exact permission rule an "always" answer saves.

---@class tether.PermissionToolCall
---@field toolCallId string
---@field title string
---@field toolKind string
---@field rawInput table
---@field content? tether.ToolContent[]

---@class tether.PermissionParams
---@field sessionId string
---@field kind? "tool"|"plan" Absent: "tool".
---@field plan? string The plan (Markdown) of a "plan" question.
---@field toolCall tether.PermissionToolCall
---@field options tether.PermissionOption[]

return {}
