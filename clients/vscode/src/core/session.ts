/**
 * The chat's controller: which session is active (and in which workspace folder), sending
 * prompts, queueing them during a turn, stopping, switching mode, resuming and rewinding.
 * It owns the authoritative `ChatState` and reports every change as a `ChatAction`, which
 * the chat view forwards to the webview.
 */
import { ChatAction, ChatState, FolderRef, emptyState, reduce } from './chatState';
import { promptText } from './promptText';
import { TetherApi } from './rpc';
import { ContentBlock, LoadedSession, Mode, PromptResult, SessionInfo, SessionUpdateParams } from './wire';

export interface ControllerOptions {
  /** The window's workspace folders (file scheme), in order; each has its own sessions. */
  folders(): FolderRef[];
  /** The folder a new session should belong to (e.g. the active editor's), if any. */
  preferredFolder?(): string | undefined;
  mode: Mode;
  /** Every state change, in order. */
  onAction(action: ChatAction): void;
  /** A session was loaded from the daemon (resumed, or restored after a reload). */
  onLoaded?(loaded: LoadedSession): void;
  /** The active session changed (remembered so a reloaded window comes back to it). */
  onSessionChanged?(sessionId: string | null): void;
}

/** Sessions of one workspace folder, for the session picker. */
export interface FolderSessions {
  folder: FolderRef;
  sessions: SessionInfo[];
}

export class ChatController {
  state: ChatState;
  private api: TetherApi | null = null;
  private attachedBefore = false;
  private nextQueued = 1;
  /** Prompts of this client whose turn is running (not queued ones). */
  private running = 0;

  constructor(private readonly options: ControllerOptions) {
    this.state = emptyState(null, options.mode);
  }

  get sessionId(): string | null {
    return this.state.sessionId;
  }

  get connected(): boolean {
    return this.api !== null;
  }

  /** A (re)started daemon. The active session (or `restore`, the one a reloaded window had
   * open) is loaded from disk: the daemon keeps it there with its undo checkpoints. */
  async attach(api: TetherApi, restore?: string): Promise<void> {
    const restarted = this.attachedBefore;
    this.attachedBefore = true;
    this.api = api;
    const sessionId = restarted ? this.state.sessionId : (this.state.sessionId ?? restore);
    if (!sessionId) return;
    try {
      await this.loadSession(sessionId);
    } catch (error) {
      if (restarted) throw error;
      // The remembered session is gone (deleted, another machine's): start afresh.
      this.options.onSessionChanged?.(null);
    }
  }

  detach(): void {
    this.api = null;
    if (this.state.busy) {
      this.dispatch({ type: 'notice', level: 'error', message: 'The Tether daemon stopped during the turn.' });
      this.dispatch({ type: 'busy', busy: false });
    }
  }

  private requireApi(): TetherApi {
    if (!this.api) throw new Error('The Tether daemon is not running.');
    return this.api;
  }

  dispatch(action: ChatAction): void {
    this.state = reduce(this.state, action);
    this.options.onAction(action);
  }

  /** The folder of a new session: the one asked for, else the preferred one, else the
   * current session's, else the first. */
  folderFor(uri?: string): FolderRef | null {
    const folders = this.options.folders();
    const wanted = uri ?? this.options.preferredFolder?.() ?? this.state.folder?.uri;
    return folders.find((f) => f.uri === wanted) ?? folders[0] ?? null;
  }

  async newSession(folderUri?: string): Promise<string> {
    const api = this.requireApi();
    const folder = this.folderFor(folderUri);
    const sessionId = await api.newSession({ workspaceFolder: folder?.uri, permissionMode: this.state.mode });
    this.dispatch({ type: 'reset', state: emptyState(sessionId, this.state.mode, null, folder) });
    this.options.onSessionChanged?.(sessionId);
    return sessionId;
  }

  async loadSession(sessionId: string, folderUri?: string): Promise<void> {
    const api = this.requireApi();
    const loaded = await api.loadSession(sessionId);
    const folder = folderUri ? this.folderFor(folderUri) : this.state.sessionId === sessionId ? this.state.folder : null;
    // The session's own mode, as it was left: a reload or a resume changes no mode (only the
    // user does, with `setMode`). A daemon that does not say keeps the one shown.
    const state = emptyState(sessionId, loaded.mode ?? this.state.mode, loaded.title ?? null, folder ?? (await this.folderOf(sessionId)));
    for (const entry of loaded.history) {
      const { turnId, ...update } = entry;
      reduce(state, { type: 'update', turnId, update, live: false });
    }
    if (loaded.rewindableTurns) state.rewindable = [...loaded.rewindableTurns];
    if (loaded.usage) {
      // The session's own totals: more exact than what the history's turns add up to.
      const u = loaded.usage;
      state.usage.sessionTokens = u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheCreationTokens;
      state.usage.sessionCostUsd = u.costUsd;
    }
    this.dispatch({ type: 'reset', state });
    this.options.onLoaded?.(loaded);
    this.options.onSessionChanged?.(sessionId);
    // An older daemon does not say the mode, and resumes in its default: keep the one shown.
    if (loaded.mode === undefined) await api.setMode(sessionId, this.state.mode).catch(() => undefined);
  }

  private async folderOf(sessionId: string): Promise<FolderRef | null> {
    for (const group of await this.listSessions().catch(() => [])) {
      if (group.sessions.some((s) => s.sessionId === sessionId)) return group.folder;
    }
    return this.folderFor();
  }

  /** Each workspace folder's sessions, newest first. */
  async listSessions(): Promise<FolderSessions[]> {
    const api = this.requireApi();
    const folders = this.options.folders();
    if (folders.length === 0) return [];
    return Promise.all(
      folders.map(async (folder) => ({ folder, sessions: await api.listSessions({ workspaceFolder: folder.uri, limit: 50 }) })),
    );
  }

  /** Send a prompt; resolves when its turn ends, with undefined when it could not be sent
   * (the chat then shows why). During a turn the daemon queues it into the running turn;
   * the chat shows it as queued until the daemon takes it in. Never rejects. */
  async send(prompt: ContentBlock[], folderUri?: string): Promise<PromptResult | undefined> {
    let sessionId: string | null = null;
    // About a file of another workspace folder: that folder's session, not this one.
    const elsewhere = folderUri !== undefined && this.state.folder !== null && this.state.folder.uri !== folderUri && !this.state.busy;
    const queued = this.state.busy ? { id: this.nextQueued++, text: promptText(prompt) } : null;
    try {
      const api = this.requireApi();
      sessionId = this.state.sessionId && !elsewhere ? this.state.sessionId : await this.newSession(folderUri);
      if (queued) this.dispatch({ type: 'queued', prompt: queued });
      else {
        this.running++;
        this.dispatch({ type: 'busy', busy: true });
      }
      const result = await api.prompt(sessionId, prompt);
      if (queued && this.isQueued(queued.id)) {
        // The turn ended before its next step could take the prompt in: it was never
        // read. Send it again, now as a turn of its own.
        this.dispatch({ type: 'unqueued', id: queued.id });
        if (this.state.sessionId === sessionId) return await this.send(prompt, folderUri);
      }
      return result;
    } catch (error) {
      this.dispatch({ type: 'notice', level: 'error', message: `The prompt failed: ${messageOf(error)}` });
      return undefined;
    } finally {
      if (queued && this.isQueued(queued.id)) this.dispatch({ type: 'unqueued', id: queued.id });
      if (!queued && sessionId !== null) this.running--;
      // The turn_end update normally clears this; a failed request must not leave it set.
      if (!queued && this.running === 0 && this.state.busy && this.state.sessionId === sessionId) this.dispatch({ type: 'busy', busy: false });
    }
  }

  private isQueued(id: number): boolean {
    return this.state.queued.some((q) => q.id === id);
  }

  async stop(): Promise<void> {
    if (this.state.sessionId && this.api) await this.api.cancel(this.state.sessionId);
  }

  async setMode(mode: Mode): Promise<void> {
    this.dispatch({ type: 'mode', mode });
    if (this.state.sessionId && this.api) await this.api.setMode(this.state.sessionId, mode);
  }

  /** Undo `turnId` and every later turn: files come back through applyEdit. */
  async rewind(turnId: string): Promise<string[]> {
    const sessionId = this.state.sessionId;
    if (!sessionId) return [];
    const restored = await this.requireApi().rewind(sessionId, turnId);
    this.dispatch({ type: 'rewound', turnId });
    return restored;
  }

  /** A live `tether/sessionUpdate`; updates of other sessions do not touch this view. */
  onSessionUpdate(params: SessionUpdateParams): void {
    if (params.sessionId !== this.state.sessionId) return;
    this.dispatch({ type: 'update', turnId: params.turnId, update: params.update, live: true });
  }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
