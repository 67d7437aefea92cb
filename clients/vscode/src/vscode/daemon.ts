/**
 * The daemon's lifecycle: find the executable, start it through vscode-languageclient,
 * check its protocol version, restart it with backoff when it crashes, and report what
 * happened as a `DaemonState` (the chat turns a problem into a set-up card with buttons).
 *
 * Each (re)start gets a fresh `LanguageClient`, so handlers and middleware are installed
 * exactly once per process and nothing of a dead connection leaks into the next. Starts,
 * stops and restarts run one at a time (`core/lifecycle.ts`): two overlapping restarts leave
 * one client, never two.
 */
import * as vscode from 'vscode';
import {
  ApplyWorkspaceEditParams,
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  StaticFeature,
} from 'vscode-languageclient/node';
import { RestartPolicy } from '../core/backoff';
import { Lifecycle } from '../core/lifecycle';
import { ServerCheck, TETHER_CLIENT_CAPABILITIES, checkServer, initializationOptions } from '../core/capabilities';
import { ClientPorts, registerClientHandlers } from '../core/handlers';
import { ConnectionStatus } from '../core/messages';
import { Resolution } from '../core/resolve';
import { RpcConnection, TetherApi } from '../core/rpc';
import { StartupFacts } from '../core/wire';
import { findDaemon, launchSettings } from './settings';

/** Where the daemon stands, and for `down`, why. */
export type DaemonState =
  | { status: 'starting' | 'stopped' }
  | { status: 'ready'; facts: StartupFacts; env: Record<string, string | undefined> }
  | { status: 'restarting'; message: string }
  | { status: 'missing'; resolution: Extract<Resolution, { found: false }> }
  | { status: 'incompatible'; check: Extract<ServerCheck, { ok: false }> }
  | { status: 'crashed'; message: string };

export function connectionStatus(state: DaemonState): ConnectionStatus {
  switch (state.status) {
    case 'starting':
    case 'ready':
    case 'restarting':
      return state.status;
    default:
      return 'down';
  }
}

/** Makes a language client for the daemon; `vscode-languageclient`'s by default. */
export type ClientFactory = (server: ServerOptions, options: LanguageClientOptions) => LanguageClient;

export interface DaemonHooks {
  ports: ClientPorts;
  /** The environment "Install the Daemon" puts the daemon in (searched before PATH). */
  managedEnv: string;
  /** The daemon's environment on top of the editor's: `tether.env`, the stored API key. */
  environment(): Promise<Record<string, string>>;
  /** An agent edit is about to be applied to these documents. */
  /** `label`: what the daemon calls the edit ("Edit src/app.py", "Tether: undo change"). */
  onApplyEdit(uris: string[], label?: string): void;
  onReady(api: TetherApi): void | Promise<void>;
  onStopped(): void;
  onState(state: DaemonState): void;
}

/** A started daemon: its client and the handlers registered on it, stopped together. */
interface Started {
  client: LanguageClient;
  stop(): Promise<void>;
}

export class Daemon implements vscode.Disposable {
  private readonly lifecycle = new Lifecycle<Started>((adopt) => this.launch(adopt));
  private readonly policy = new RestartPolicy();
  private timer: NodeJS.Timeout | undefined;
  state: DaemonState = { status: 'stopped' };

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly hooks: DaemonHooks,
    /** Makes the language client (a seam for tests; the real one by default). */
    private readonly createClient: ClientFactory = (server, options) => new LanguageClient('tether', 'Tether', server, options),
  ) {}

  /** Start, once another start, stop or restart under way has finished. Never rejects: a
   * start that fails says why in the log and the state. */
  start(): Promise<void> {
    return this.lifecycle.restart().catch((error: unknown) => this.failed(error));
  }

  /** The user asked for it (command, a button, a changed setting). Restarts run one at a
   * time; asked again while one waits, the one waiting serves both. */
  restart(): Promise<void> {
    this.policy.reset();
    clearTimeout(this.timer);
    return this.start();
  }

  private failed(error: unknown): void {
    const message = `The Tether daemon could not be started: ${error instanceof Error ? error.message : String(error)}`;
    this.output.error(message);
    this.setState({ status: 'crashed', message });
  }

  /** Resolves once the starts and restarts under way have finished (ready or not). */
  settled(): Promise<void> {
    return this.lifecycle.settled();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    await this.lifecycle.stop();
    this.setState({ status: 'stopped' });
  }

  async dispose(): Promise<void> {
    clearTimeout(this.timer);
    await this.lifecycle.dispose();
  }

  /** The client running now, if any (for tests and the log). */
  get client(): LanguageClient | undefined {
    return this.lifecycle.running?.client;
  }

  private async launch(adopt: (started: Started) => void): Promise<void> {
    this.setState({ status: 'starting' });
    const found = findDaemon(this.hooks.managedEnv);
    if (!found.found) {
      this.output.error(`${found.message}\nSearched:\n  ${found.searched.join('\n  ')}`);
      this.setState({ status: 'missing', resolution: found });
      return;
    }
    const settings = launchSettings();
    const env = { ...process.env, ...settings.env, ...(await this.hooks.environment()) };
    this.output.info(`Starting ${found.command} ${found.args.join(' ')} (found via ${found.source})`);
    const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
    const serverOptions: ServerOptions = {
      command: found.command,
      args: found.args,
      options: { cwd: folder?.uri.fsPath, env },
    };
    let started: Started | undefined;
    const client = this.createClient(serverOptions, this.clientOptions(initializationOptions(settings), () => started));
    client.registerFeature(tetherCapabilities);
    const handlers = registerClientHandlers(asRpc(client), this.hooks.ports);
    started = {
      client,
      stop: async () => {
        handlers.dispose();
        this.hooks.onStopped();
        await client.dispose(5000).catch(() => undefined);
      },
    };
    const self = started;
    adopt(self);
    try {
      await client.start();
    } catch (error) {
      this.output.error(`The daemon failed to start: ${String(error)}`);
      this.crashed(self);
      return;
    }
    const check = checkServer(client.initializeResult, found.command);
    if (!check.ok) {
      this.output.error(check.message);
      if (this.lifecycle.lost(self)) {
        handlers.dispose();
        await client.dispose(5000).catch(() => undefined);
      }
      this.setState({ status: 'incompatible', check });
      return;
    }
    if (check.warning) {
      this.output.warn(check.warning);
      void vscode.window.showWarningMessage(check.warning);
    }
    this.policy.started(Date.now());
    this.setState({ status: 'ready', facts: check.facts, env });
    await this.hooks.onReady(new TetherApi(asRpc(client)));
  }

  private clientOptions(initOptions: Record<string, unknown>, started: () => Started | undefined): LanguageClientOptions {
    return {
      // Every file and unsaved buffer is synced, so the agent reads what the user sees.
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.output,
      initializationOptions: initOptions,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => {
          // This client is done; restarts are ours (with backoff), not the library's.
          const self = started();
          if (self) setImmediate(() => this.crashed(self));
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        workspace: {
          handleApplyEdit: async (params, next) => {
            this.hooks.onApplyEdit(editedUris(params), params.label);
            const source = new vscode.CancellationTokenSource();
            try {
              return await next(params, source.token);
            } finally {
              source.dispose();
            }
          },
        },
      },
    };
  }

  /** `started` exited by itself. Only the current daemon counts: one stopped on purpose, or
   * already replaced, is nobody's concern. */
  private crashed(started: Started): void {
    if (!this.lifecycle.lost(started)) return;
    started.stop().catch(() => undefined);
    const delay = this.policy.crashed(Date.now());
    if (delay === null) {
      this.setState({ status: 'crashed', message: 'The Tether daemon keeps exiting, so it was not started again. Its log is in the Tether output.' });
      return;
    }
    this.output.warn(`The daemon exited; restarting in ${delay / 1000}s`);
    this.setState({ status: 'restarting', message: `restarting in ${delay / 1000}s` });
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.start(), delay);
  }

  private setState(state: DaemonState): void {
    this.state = state;
    this.hooks.onState(state);
  }
}

/** Declares the Tether extensions of the protocol this client implements. Registered after
 * the built-in features, so it also takes back `window.workDoneProgress`: the chat and the
 * status bar item already show what a turn is doing, a second spinner would only repeat it. */
const tetherCapabilities: StaticFeature = {
  fillClientCapabilities(capabilities) {
    capabilities.experimental = { ...(capabilities.experimental ?? {}), tether: { ...TETHER_CLIENT_CAPABILITIES } };
    capabilities.window = { ...(capabilities.window ?? {}), workDoneProgress: false };
  },
  initialize() {},
  getState: () => ({ kind: 'static' }),
  clear() {},
};

function asRpc(client: LanguageClient): RpcConnection {
  return {
    sendRequest: <R>(method: string, params: unknown) => client.sendRequest<R>(method, params),
    sendNotification: (method, params) => client.sendNotification(method, params),
    onNotification: (method, handler) => client.onNotification(method, handler),
    onRequest: (method, handler) => client.onRequest(method, handler),
  };
}

function editedUris(params: ApplyWorkspaceEditParams): string[] {
  const uris: string[] = [];
  for (const change of params.edit.documentChanges ?? []) {
    if ('textDocument' in change) uris.push(change.textDocument.uri);
    else if ('uri' in change) uris.push(change.uri);
  }
  uris.push(...Object.keys(params.edit.changes ?? {}));
  return uris;
}
