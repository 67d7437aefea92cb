/**
 * The chat's controller: which session is active, sending prompts, stopping, switching
 * mode, resuming and rewinding. It owns the authoritative `ChatState` and reports every
 * change as a `ChatAction`, which the chat view forwards to the webview.
 */
import { ChatAction, ChatState, emptyState, reduce } from './chatState';
import { TetherApi } from './rpc';
import { ContentBlock, Mode, PromptResult, SessionInfo, SessionUpdateParams } from './wire';

export interface ControllerOptions {
  workspaceFolder?: string;
  mode: Mode;
  /** Every state change, in order. */
  onAction(action: ChatAction): void;
}

export class ChatController {
  state: ChatState;
  private api: TetherApi | null = null;
  private attachedBefore = false;

  constructor(private readonly options: ControllerOptions) {
    this.state = emptyState(null, options.mode);
  }

  get sessionId(): string | null {
    return this.state.sessionId;
  }

  /** A (re)started daemon. After a restart its sessions are gone from memory, so the active
   * one is resumed from disk and nothing from before can be rewound any more. */
  async attach(api: TetherApi): Promise<void> {
    const restarted = this.attachedBefore;
    this.attachedBefore = true;
    this.api = api;
    if (restarted && this.state.sessionId) {
      await this.loadSession(this.state.sessionId);
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

  async newSession(): Promise<string> {
    const api = this.requireApi();
    const sessionId = await api.newSession({ workspaceFolder: this.options.workspaceFolder, permissionMode: this.state.mode });
    this.dispatch({ type: 'reset', state: emptyState(sessionId, this.state.mode) });
    return sessionId;
  }

  async loadSession(sessionId: string): Promise<void> {
    const history = await this.requireApi().loadSession(sessionId);
    const state = emptyState(sessionId, this.state.mode);
    for (const entry of history) {
      const { turnId, ...update } = entry;
      reduce(state, { type: 'update', turnId, update, live: false });
    }
    this.dispatch({ type: 'reset', state });
    // The resumed engine starts in the daemon's default mode; keep the user's choice.
    await this.requireApi().setMode(sessionId, this.state.mode).catch(() => undefined);
  }

  listSessions(): Promise<SessionInfo[]> {
    return this.requireApi().listSessions({ workspaceFolder: this.options.workspaceFolder, limit: 50 });
  }

  /** Send a prompt (queued by the daemon if a turn is running); resolves when its turn ends,
   * with undefined when it could not be sent (the chat then shows why). Never rejects. */
  async send(prompt: ContentBlock[]): Promise<PromptResult | undefined> {
    let sessionId: string | null = null;
    try {
      const api = this.requireApi();
      sessionId = this.state.sessionId ?? (await this.newSession());
      this.dispatch({ type: 'busy', busy: true });
      return await api.prompt(sessionId, prompt);
    } catch (error) {
      this.dispatch({ type: 'notice', level: 'error', message: `The prompt failed: ${messageOf(error)}` });
      return undefined;
    } finally {
      // The turn_end update normally clears this; a failed request must not leave it set.
      if (this.state.busy && this.state.sessionId === sessionId) this.dispatch({ type: 'busy', busy: false });
    }
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

  setAwaitingPermission(toolCallId: string, awaiting: boolean, choices?: { label: string; optionId: string }[]): void {
    this.dispatch({ type: 'awaitingPermission', toolCallId, awaiting, choices });
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
