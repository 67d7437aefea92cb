/** The chat's state: plain JSON, shared by the extension host and the webview. */
import {
  ContentBlock,
  Mode,
  PlanEntry,
  SessionUpdate,
  StopReason,
  TaskStatus,
  ToolContent,
  ToolKind,
  ToolStatus,
  TurnError,
} from './wire';

export interface ItemBase {
  id: string;
  turnId: string;
  rev: number;
}

export interface ToolCard extends ItemBase {
  kind: 'tool';
  toolCallId: string;
  title: string;
  toolKind: ToolKind;
  status: ToolStatus;
  rawInput: Record<string, unknown>;
  locations: { uri: string; line?: number }[];
  content: ToolContent[];
  rawOutput?: unknown;
  awaitingPermission?: boolean;
  /** The answers offered while awaiting permission, so the card can answer too. */
  permissionChoices?: { label: string; optionId: string }[];
}

export type ChatItem =
  | (ItemBase & { kind: 'user'; content: ContentBlock[] })
  | (ItemBase & { kind: 'agent'; text: string })
  | (ItemBase & { kind: 'thought'; text: string })
  | ToolCard
  | (ItemBase & { kind: 'notice'; level: 'info' | 'warning' | 'error'; message: string })
  | (ItemBase & { kind: 'compaction'; trigger: string; tokensBefore: number; tokensAfter: number })
  | (ItemBase & { kind: 'turn_end'; stopReason: StopReason; error?: TurnError });

export interface TaskView {
  taskId: string;
  toolCallId?: string;
  status: TaskStatus;
  description: string;
  summary?: string;
}

export interface UsageView {
  /** Tokens in the context window at the last model call, and the window's size. */
  contextTokens: number;
  contextWindow: number;
  /** Running totals for the current turn (the daemon reports them cumulatively). */
  turnInputTokens: number;
  turnOutputTokens: number;
  turnCostUsd?: number;
  /** Totals of finished turns of this session (as seen by this client). */
  sessionTokens: number;
  sessionCostUsd?: number;
}

export interface ChatState {
  sessionId: string | null;
  title: string | null;
  mode: Mode;
  items: ChatItem[];
  plan: PlanEntry[];
  tasks: TaskView[];
  usage: UsageView;
  busy: boolean;
  /** Title of the tool call running right now, for the status bar and the chat header. */
  currentTool: string | null;
  /** Turns the daemon can rewind (it holds checkpoints only for turns of its own run). */
  rewindable: string[];
  nextId: number;
}

export type ChatAction =
  | { type: 'update'; turnId: string; update: SessionUpdate; live: boolean }
  | { type: 'reset'; state: ChatState }
  | { type: 'busy'; busy: boolean }
  | { type: 'awaitingPermission'; toolCallId: string; awaiting: boolean; choices?: { label: string; optionId: string }[] }
  | { type: 'mode'; mode: Mode }
  | { type: 'rewound'; turnId: string }
  | { type: 'notice'; level: 'info' | 'warning' | 'error'; message: string };

export function emptyUsage(): UsageView {
  return {
    contextTokens: 0,
    contextWindow: 0,
    turnInputTokens: 0,
    turnOutputTokens: 0,
    sessionTokens: 0,
  };
}

export function emptyState(sessionId: string | null = null, mode: Mode = 'default', title: string | null = null): ChatState {
  return {
    sessionId,
    title,
    mode,
    items: [],
    plan: [],
    tasks: [],
    usage: emptyUsage(),
    busy: false,
    currentTool: null,
    rewindable: [],
    nextId: 1,
  };
}
