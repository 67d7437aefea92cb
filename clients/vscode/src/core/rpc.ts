/**
 * The slice of a JSON-RPC connection Tether needs, and typed calls on top of it.
 *
 * Both vscode-languageclient's `LanguageClient` (in the extension) and vscode-jsonrpc's
 * `MessageConnection` (in the protocol tests) satisfy `RpcConnection`, so the code that
 * talks to the daemon is the same in both places.
 */
import {
  ChangeListing,
  ContentBlock,
  DiagnosticsParams,
  HunkSelection,
  HunkState,
  KeepResult,
  LoadedSession,
  Methods,
  Mode,
  PromptResult,
  SessionInfo,
  UndoResult,
} from './wire';

export interface Disposable {
  dispose(): void;
}

/** A cancellation token as both vscode and vscode-jsonrpc define it. */
export interface CancelToken {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): Disposable;
}

export interface RpcConnection {
  sendRequest<R>(method: string, params: unknown): Promise<R>;
  sendNotification(method: string, params: unknown): Promise<void>;
  // Params arrive as parsed JSON: `unknown` here, narrowed by the handlers.
  onNotification(method: string, handler: (params: unknown) => void): Disposable;
  onRequest(method: string, handler: (params: unknown, token: CancelToken) => unknown): Disposable;
}

/** Typed client→server calls of docs/protocol.md. */
export class TetherApi {
  constructor(private readonly conn: RpcConnection) {}

  async newSession(params: { workspaceFolder?: string; title?: string; model?: string; permissionMode?: Mode } = {}): Promise<string> {
    const result = await this.conn.sendRequest<{ sessionId: string }>(Methods.newSession, params);
    return result.sessionId;
  }

  prompt(sessionId: string, prompt: ContentBlock[]): Promise<PromptResult> {
    return this.conn.sendRequest<PromptResult>(Methods.prompt, { sessionId, prompt });
  }

  async cancel(sessionId: string): Promise<void> {
    await this.conn.sendRequest<null>(Methods.cancel, { sessionId });
  }

  async listSessions(params: { workspaceFolder?: string; limit?: number } = {}): Promise<SessionInfo[]> {
    const result = await this.conn.sendRequest<{ sessions: SessionInfo[] }>(Methods.listSessions, params);
    return result.sessions;
  }

  loadSession(sessionId: string): Promise<LoadedSession> {
    return this.conn.sendRequest<LoadedSession>(Methods.loadSession, { sessionId });
  }

  async setMode(sessionId: string, mode: Mode): Promise<void> {
    await this.conn.sendRequest<null>(Methods.setMode, { sessionId, mode });
  }

  async rewind(sessionId: string, turnId: string): Promise<string[]> {
    const result = await this.conn.sendRequest<{ restored: string[] }>(Methods.rewind, { sessionId, turnId });
    return result.restored;
  }

  /** A session's changes, of one turn and/or file when given (`tether/listChanges`). */
  listChanges(sessionId: string, filter: { turnId?: string; uri?: string; states?: HunkState[] } = {}): Promise<ChangeListing> {
    return this.conn.sendRequest<ChangeListing>(Methods.listChanges, { sessionId, ...filter });
  }

  keepChanges(sessionId: string, which: HunkSelection): Promise<KeepResult> {
    return this.conn.sendRequest<KeepResult>(Methods.keepChanges, { sessionId, ...which });
  }

  undoChanges(sessionId: string, which: HunkSelection): Promise<UndoResult> {
    return this.conn.sendRequest<UndoResult>(Methods.undoChanges, { sessionId, ...which });
  }

  sendDiagnostics(params: DiagnosticsParams): Promise<void> {
    return this.conn.sendNotification(Methods.diagnostics, params);
  }
}
