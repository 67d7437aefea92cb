/** The chat's state: plain JSON, shared by the extension host and the webview. */
import {
  ContentBlock,
  Mode,
  PermissionKind,
  PermissionOptionKind,
  PlanEntry,
  Rejection,
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
  /** An open permission question about this call: the card can answer it too. */
  question?: CardQuestion;
  /** What the user answered, once they did (plans show it with their feedback). */
  answered?: { label: string; optionId: string; feedback?: string };
  /** The call did not run: declined by the user, a rule, a hook or the mode. */
  rejected?: Rejection;
  /** Files whose unsaved changes (the user's) were saved along with this call's edit. */
  savedUserEdits?: string[];
}

/** A permission question as the chat card shows it. */
export interface CardQuestion {
  kind: PermissionKind;
  /** The session that asks: answers name it (a tool call id is unique within a session only). */
  sessionId: string;
  /** `rule`: what an "always" answer saves; `meaning`: what that rule covers, in words. */
  choices: { label: string; optionId: string; kind: PermissionOptionKind; rule?: string; meaning?: string }[];
  /** A plan approval: the plan, in Markdown. */
  plan?: string;
  /** The call proposes file changes that "Review diff" can show. */
  hasDiff: boolean;
}

/** A prompt sent during a turn, waiting for the daemon to take it in at the next step. */
export interface QueuedPrompt {
  id: number;
  text: string;
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

/** The workspace folder a session belongs to (a multi-root window has several). */
export interface FolderRef {
  uri: string;
  name: string;
}

export interface ChatState {
  sessionId: string | null;
  title: string | null;
  folder: FolderRef | null;
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
  /** Prompts sent during a turn and not yet taken in. */
  queued: QueuedPrompt[];
  nextId: number;
}

export type ChatAction =
  | { type: 'update'; turnId: string; update: SessionUpdate; live: boolean }
  | { type: 'reset'; state: ChatState }
  | { type: 'busy'; busy: boolean }
  | {
      type: 'question';
      /** The asking session: the card is shown in its transcript only. */
      sessionId: string;
      toolCallId: string;
      /** The open question, or null once it is answered or withdrawn. */
      question: CardQuestion | null;
      answered?: { label: string; optionId: string; feedback?: string };
      /** The call, for a question that arrives before its card. */
      call?: { title: string; toolKind: ToolKind; rawInput: Record<string, unknown> };
    }
  | { type: 'queued'; prompt: QueuedPrompt }
  | { type: 'unqueued'; id: number }
  | { type: 'mode'; mode: Mode }
  | { type: 'rewound'; turnId: string }
  /** Saving an agent edit of `uri` also saved changes the user had not saved. */
  | { type: 'savedUserEdits'; uri: string }
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

export function emptyState(sessionId: string | null = null, mode: Mode = 'default', title: string | null = null, folder: FolderRef | null = null): ChatState {
  return {
    sessionId,
    title,
    folder,
    mode,
    items: [],
    plan: [],
    tasks: [],
    usage: emptyUsage(),
    busy: false,
    currentTool: null,
    rewindable: [],
    queued: [],
    nextId: 1,
  };
}
