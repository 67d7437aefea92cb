/**
 * The chat's state and the one reducer that builds it.
 *
 * The extension host and the webview both run `reduce` on the same stream of actions: the
 * host keeps the authoritative copy (so a reloaded webview gets a snapshot), the webview
 * applies each action as it arrives (so streaming does not resend the whole conversation).
 * State is plain JSON for that reason. Items carry a `rev` that bumps on every change, which
 * is what the webview's renderer diffs on.
 */
import { ChatAction, ChatItem, ChatState, TaskView, ToolCard, UsageView } from './chatTypes';
import { promptText } from './promptText';
import { uriKey } from './uri';
import { SessionUpdate } from './wire';

export * from './chatTypes';

/** Apply one action. Mutates and returns `state` (the webview applies many per frame). */
export function reduce(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case 'reset':
      return structuredCloneJson(action.state);
    case 'busy':
      state.busy = action.busy;
      if (!action.busy) state.currentTool = null;
      return state;
    case 'question':
      return question(state, action);
    case 'queued':
      state.queued.push(action.prompt);
      return state;
    case 'unqueued':
      state.queued = state.queued.filter((q) => q.id !== action.id);
      return state;
    case 'mode':
      state.mode = action.mode;
      return state;
    case 'rewound':
      return rewound(state, action.turnId);
    case 'savedUserEdits':
      return savedUserEdits(state, action.uri);
    case 'notice':
      push(state, { kind: 'notice', turnId: '', level: action.level, message: action.message });
      return state;
    case 'update':
      return applyUpdate(state, action.turnId, action.update, action.live);
  }
}

const TURN_ACTIVITY: ReadonlySet<string> = new Set(['agent_message_chunk', 'agent_thought_chunk', 'tool_call']);

function applyUpdate(state: ChatState, turnId: string, update: SessionUpdate, live: boolean): ChatState {
  // The daemon may start a turn by itself (a background task finished): work means busy.
  if (live && TURN_ACTIVITY.has(update.kind)) state.busy = true;
  switch (update.kind) {
    case 'user_message': {
      push(state, { kind: 'user', turnId, content: update.content });
      // A finished todo plan belongs to the work it tracked, not to the next request.
      if (state.plan.length && state.plan.every((e) => e.status === 'completed')) state.plan = [];
      if (live) {
        state.busy = true;
        if (turnId && !state.rewindable.includes(turnId)) state.rewindable.push(turnId);
        // A queued prompt the daemon took in: it is in the conversation now.
        const text = promptText(update.content);
        const at = state.queued.findIndex((q) => q.text === text);
        if (at >= 0) state.queued.splice(at, 1);
      }
      break;
    }
    case 'agent_message_chunk':
    case 'agent_thought_chunk': {
      const kind = update.kind === 'agent_message_chunk' ? 'agent' : 'thought';
      const last = state.items[state.items.length - 1];
      if (last && last.kind === kind && last.turnId === turnId) {
        last.text += update.text;
        last.rev++;
      } else {
        push(state, { kind, turnId, text: update.text });
      }
      break;
    }
    case 'tool_call': {
      const existing = findTool(state, update.toolCallId);
      if (existing) {
        Object.assign(existing, { title: update.title, toolKind: update.toolKind, status: update.status, rawInput: update.rawInput });
        existing.rev++;
      } else {
        state.items.push({
          kind: 'tool',
          id: `t:${update.toolCallId}`,
          turnId,
          rev: 1,
          toolCallId: update.toolCallId,
          title: update.title,
          toolKind: update.toolKind,
          status: update.status,
          rawInput: update.rawInput ?? {},
          locations: update.locations ?? [],
          content: [],
        });
      }
      break;
    }
    case 'tool_call_update': {
      const card = findTool(state, update.toolCallId);
      if (!card) break;
      if (update.status) card.status = update.status;
      if (update.title) card.title = update.title;
      // Content is the whole content so far (ACP semantics), not a delta.
      if (update.content) card.content = update.content;
      if (update.rawOutput !== undefined) card.rawOutput = update.rawOutput;
      if (update.rejected) card.rejected = update.rejected;
      if (card.status === 'completed' || card.status === 'failed') card.question = undefined;
      card.rev++;
      if (live) state.currentTool = runningToolTitle(state);
      break;
    }
    case 'plan':
      state.plan = update.entries;
      break;
    case 'usage': {
      const u = state.usage;
      u.contextTokens = update.contextTokens;
      u.contextWindow = update.contextWindow;
      u.turnInputTokens = update.inputTokens + update.cacheReadTokens + update.cacheCreationTokens;
      u.turnOutputTokens = update.outputTokens;
      u.turnCostUsd = update.costUsd;
      break;
    }
    case 'task': {
      const task: TaskView = {
        taskId: update.taskId,
        toolCallId: update.toolCallId,
        status: update.status,
        description: update.description,
        summary: update.summary,
      };
      const index = state.tasks.findIndex((t) => t.taskId === update.taskId);
      if (index >= 0) state.tasks[index] = task;
      else state.tasks.push(task);
      break;
    }
    case 'compaction':
      push(state, { kind: 'compaction', turnId, trigger: update.trigger, tokensBefore: update.tokensBefore, tokensAfter: update.tokensAfter });
      break;
    case 'turn_end': {
      push(state, { kind: 'turn_end', turnId, stopReason: update.stopReason, error: update.error });
      foldTurnUsage(state.usage);
      if (live) {
        state.busy = false;
        state.currentTool = null;
      }
      // A turn that stopped early leaves no tool running: cards still open never finished.
      for (const item of state.items) {
        if (update.stopReason === 'end_turn') break;
        if (item.kind === 'tool' && item.turnId === turnId && (item.status === 'pending' || item.status === 'in_progress')) {
          item.status = 'failed';
          item.question = undefined;
          item.rev++;
        }
      }
      break;
    }
    case 'notice':
      push(state, { kind: 'notice', turnId, level: update.level, message: update.message });
      break;
    case 'mode':
      state.mode = update.mode;
      break;
    default:
      // A kind this client does not know yet: ignore it rather than break the view.
      break;
  }
  return state;
}

function foldTurnUsage(u: UsageView): void {
  u.sessionTokens += u.turnInputTokens + u.turnOutputTokens;
  if (u.turnCostUsd !== undefined) u.sessionCostUsd = (u.sessionCostUsd ?? 0) + u.turnCostUsd;
  u.turnInputTokens = 0;
  u.turnOutputTokens = 0;
  u.turnCostUsd = undefined;
}

/** The conversation continues from before `turnId`: drop that turn and every later one. */
function rewound(state: ChatState, turnId: string): ChatState {
  const first = state.items.findIndex((i) => i.turnId === turnId);
  if (first >= 0) state.items.splice(first);
  const at = state.rewindable.indexOf(turnId);
  if (at >= 0) state.rewindable.splice(at);
  state.plan = [];
  // Every turn undone: the session is as good as new, and so is its title.
  if (!state.items.some((i) => i.kind === 'user')) state.title = null;
  return state;
}

/** The edit that saved the user's unsaved lines says so on its card: the editing call of
 * this transcript that names the file and is running now (its edit is what was saved). An
 * old card is never it: a save after an undo, a rewind or another session's edit is said
 * where that operation is (the host checks `savingCall` first). */
function savedUserEdits(state: ChatState, uri: string): ChatState {
  const item = savingCall(state, uri);
  if (!item) return state;
  if (!item.savedUserEdits?.includes(uri)) item.savedUserEdits = [...(item.savedUserEdits ?? []), uri];
  item.rev++;
  return state;
}

/** The running editing call that names `uri` (its edit is being applied and saved), if any. */
export function savingCall(state: ChatState, uri: string): ToolCard | undefined {
  const key = uriKey(uri);
  const names = (card: ToolCard) => [...card.locations.map((l) => l.uri), ...card.content.flatMap((c) => (c.type === 'diff' ? [c.uri] : []))];
  for (let i = state.items.length - 1; i >= 0; i--) {
    const item = state.items[i];
    if (item.kind !== 'tool' || !EDITING.has(item.toolKind) || !RUNNING.has(item.status)) continue;
    if (names(item).some((u) => uriKey(u) === key)) return item;
  }
  return undefined;
}

const RUNNING: ReadonlySet<string> = new Set(['pending', 'in_progress']);

/** The notification for a save no running call of the chat made (`label`: the daemon's name
 * for the edit, such as "Tether: undo change"). */
export function savedElsewhere(name: string, label?: string): string {
  const what = label ? `"${label.replace(/^Tether: /, '')}"` : 'a Tether edit';
  return `Tether: saving ${name} after ${what} also saved the changes you had not saved yet.`;
}
const EDITING: ReadonlySet<string> = new Set(['edit', 'delete', 'move']);

/** A question goes on its own session's card: in another session's transcript it would be
 * answered for the wrong session (or a card made there that is no call of it). */
function question(state: ChatState, action: Extract<ChatAction, { type: 'question' }>): ChatState {
  if (action.sessionId !== state.sessionId) return state;
  let card = findTool(state, action.toolCallId);
  if (!card && action.question && action.call) {
    // The question came before its card: show the card so it can be answered.
    const last = state.items[state.items.length - 1];
    state.items.push({
      kind: 'tool',
      id: `t:${action.toolCallId}`,
      turnId: last?.turnId ?? '',
      rev: 1,
      toolCallId: action.toolCallId,
      title: action.call.title,
      toolKind: action.call.toolKind,
      status: 'pending',
      rawInput: action.call.rawInput,
      locations: [],
      content: [],
    });
    card = findTool(state, action.toolCallId);
  }
  if (!card) return state;
  card.question = action.question ?? undefined;
  if (action.answered) card.answered = action.answered;
  card.rev++;
  return state;
}

type NewItem = ChatItem extends infer T ? (T extends ChatItem ? Omit<T, 'id' | 'rev'> : never) : never;

function push(state: ChatState, item: NewItem): void {
  state.items.push({ ...item, id: `i${state.nextId++}`, rev: 1 } as ChatItem);
}

export function findTool(state: ChatState, toolCallId: string): ToolCard | undefined {
  for (let i = state.items.length - 1; i >= 0; i--) {
    const item = state.items[i];
    if (item.kind === 'tool' && item.toolCallId === toolCallId) return item;
  }
  return undefined;
}

function runningToolTitle(state: ChatState): string | null {
  for (let i = state.items.length - 1; i >= 0; i--) {
    const item = state.items[i];
    if (item.kind === 'tool' && item.status === 'in_progress') return item.title;
  }
  return null;
}

function structuredCloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
