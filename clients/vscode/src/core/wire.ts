/**
 * The Tether wire protocol (docs/protocol.md) as TypeScript types.
 *
 * This is the one place where shapes arrive untyped from JSON-RPC; everything past it uses
 * these types. Fields the daemon may add later are tolerated (structural typing), unknown
 * update kinds are ignored by the reducer rather than crashing the view.
 */

export const PROTOCOL_VERSION = 1;

export type Mode = 'default' | 'acceptEdits' | 'plan' | 'bypassPermissions' | 'dontAsk';
export const MODES: readonly Mode[] = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'];

export type StopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'max_turn_requests'
  | 'cancelled'
  | 'refusal'
  | 'error';

export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'resource_link'; uri: string; range?: Range; name?: string }
  | { type: 'image'; mimeType: string; data: string };

export type ToolKind =
  | 'read'
  | 'edit'
  | 'delete'
  | 'move'
  | 'search'
  | 'execute'
  | 'think'
  | 'fetch'
  | 'other';
export type ToolStatus = 'pending' | 'in_progress' | 'completed' | 'failed';

export type ToolContent =
  | { type: 'text'; text: string }
  /** `line` (zero-based): the texts are the region of a big file that starts there; absent: the whole file. */
  | { type: 'diff'; uri: string; oldText?: string | null; newText: string; line?: number }
  | { type: 'terminal'; output: string; exitCode?: number | null };

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
  costUsd?: number;
}

export interface PlanEntry {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
  activeForm?: string;
}

export type TaskStatus = 'running' | 'completed' | 'failed' | 'killed';

/** Who declined a tool call that did not run. */
export type Rejection = 'user' | 'rule' | 'hook' | 'mode';

export interface TurnError {
  code: string;
  message: string;
}

/** `update` of a `tether/sessionUpdate`, discriminated by `kind`. */
export type SessionUpdate =
  | { kind: 'user_message'; content: ContentBlock[] }
  | { kind: 'agent_message_chunk'; text: string }
  | { kind: 'agent_thought_chunk'; text: string }
  | {
      kind: 'tool_call';
      toolCallId: string;
      title: string;
      toolKind: ToolKind;
      status: ToolStatus;
      rawInput: Record<string, unknown>;
      locations?: { uri: string; line?: number }[];
    }
  | {
      kind: 'tool_call_update';
      toolCallId: string;
      status?: ToolStatus;
      title?: string;
      content?: ToolContent[];
      rawOutput?: unknown;
      /** The call did not run because of an answer or a rule, not because it failed. */
      rejected?: Rejection;
    }
  | { kind: 'plan'; entries: PlanEntry[] }
  | ({ kind: 'usage'; contextTokens: number; contextWindow: number } & Usage)
  | {
      kind: 'task';
      taskId: string;
      toolCallId?: string;
      status: TaskStatus;
      description: string;
      summary?: string;
    }
  | { kind: 'compaction'; trigger: 'auto' | 'manual' | 'reactive'; tokensBefore: number; tokensAfter: number }
  | { kind: 'turn_end'; stopReason: StopReason; error?: TurnError }
  | { kind: 'notice'; level: 'info' | 'warning' | 'error'; message: string }
  | { kind: 'mode'; mode: Mode }
  /** The change set changed for these turns and files: list them again (`tether/listChanges`). */
  | { kind: 'changes'; turnIds: string[]; uris: string[] };

export type UpdateKind = SessionUpdate['kind'];

export interface SessionUpdateParams {
  sessionId: string;
  turnId: string;
  update: SessionUpdate;
}

export interface PromptResult {
  stopReason: StopReason;
  turnId: string;
  usage: Usage;
  error?: TurnError;
}

export interface SessionInfo {
  sessionId: string;
  title: string | null;
  workspaceFolder: string | null;
  createdAt: string;
  updatedAt: string;
  turns: number;
}

/** One entry of `tether/loadSession` history: an update plus the turn it belongs to. */
export type HistoryEntry = SessionUpdate & { turnId: string };

/** `tether/loadSession`'s result. Fields past `history` come from newer daemons. */
export interface LoadedSession {
  sessionId: string;
  history: HistoryEntry[];
  title?: string | null;
  /** Live turns (rewound ones do not count). */
  turns?: number;
  /** Totals of the whole session. */
  usage?: Usage;
  /** Turns `tether/rewind` can undo, oldest first. */
  rewindableTurns?: string[];
  /** The session's permission mode as it was left (the daemon resumes it in that mode). */
  mode?: Mode;
}

export type PermissionOptionKind = 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';

export interface PermissionOption {
  optionId: string;
  name: string;
  kind: PermissionOptionKind;
  /** `allow_always`/`reject_always`: the exact permission rule the answer saves. */
  rule?: string;
}

/** A question about one tool call, or the approval of a plan (ExitPlanMode). */
export type PermissionKind = 'tool' | 'plan';

export interface PermissionRequestParams {
  sessionId: string;
  kind?: PermissionKind;
  /** `kind: "plan"`: the plan, in Markdown. */
  plan?: string;
  toolCall: {
    toolCallId: string;
    title: string;
    toolKind: ToolKind;
    rawInput: Record<string, unknown>;
    content?: ToolContent[];
  };
  options: PermissionOption[];
}

export type PermissionOutcome =
  | { outcome: { outcome: 'selected'; optionId: string; feedback?: string } }
  | { outcome: { outcome: 'cancelled' } };

/** Option ids of a plan approval (docs/protocol.md, permission questions). */
export const PLAN_OPTIONS = { startDefault: 'plan_default', startAcceptEdits: 'plan_accept_edits', keep: 'plan_keep' } as const;

/** What `initialize` reports about the daemon's set-up (`capabilities.experimental.tether`). */
export interface StartupFacts {
  /** The model new sessions use, or null when none is configured. */
  model: string | null;
  modelSource?: string | null;
}

export interface SaveDocumentsParams {
  uris: string[];
}

/** An LSP Diagnostic as `tether/diagnostics` carries it. */
export interface WireDiagnostic {
  range: Range;
  severity?: 1 | 2 | 3 | 4;
  code?: string | number;
  source?: string;
  message: string;
}

export interface DiagnosticsParams {
  uri: string;
  diagnostics: WireDiagnostic[];
}

/** What the user made of a change a turn made (docs/protocol.md, `HunkState`). */
export type HunkState = 'pending' | 'kept' | 'undone';
export const HUNK_STATES: readonly HunkState[] = ['pending', 'kept', 'undone'];

/** One block of lines a turn changed (`Hunk`). `range`: where its lines are in the file now
 * (whole lines); absent for a conflict (its lines were changed since). */
export interface Hunk {
  hunkId: string;
  turnId: string;
  state: HunkState;
  conflict: boolean;
  oldText: string;
  newText: string;
  summary: string;
  range?: Range;
}

export interface HunkCounts {
  pending: number;
  kept: number;
  undone: number;
  conflicts: number;
}

export interface ChangeListing {
  files: { uri: string; hunks: Hunk[] }[];
  counts: HunkCounts;
  notTracked?: { uri: string; turnId: string; reason: string }[];
}

/** Which hunks `tether/keepChanges` and `tether/undoChanges` act on. */
export interface HunkSelection {
  hunkIds?: string[];
  uri?: string;
  turnId?: string;
}

export interface NotDone {
  hunkId: string;
  uri: string;
  reason: string;
  conflict: boolean;
}

export interface KeepResult {
  kept: string[];
  notKept?: NotDone[];
}

export interface UndoResult {
  undone: string[];
  notUndone?: NotDone[];
}

export const Methods = {
  newSession: 'tether/newSession',
  prompt: 'tether/prompt',
  cancel: 'tether/cancel',
  listSessions: 'tether/listSessions',
  loadSession: 'tether/loadSession',
  setMode: 'tether/setMode',
  rewind: 'tether/rewind',
  listChanges: 'tether/listChanges',
  keepChanges: 'tether/keepChanges',
  undoChanges: 'tether/undoChanges',
  sessionUpdate: 'tether/sessionUpdate',
  requestPermission: 'tether/requestPermission',
  saveDocuments: 'tether/saveDocuments',
  diagnostics: 'tether/diagnostics',
} as const;
