/**
 * The daemon's lifecycle: find the executable, start it through vscode-languageclient,
 * check its protocol version, restart it with backoff when it crashes, and explain in a
 * notification (with a "Configure" action) when it is missing or too old.
 *
 * Each (re)start gets a fresh `LanguageClient`, so handlers and middleware are installed
 * exactly once per process and nothing of a dead connection leaks into the next.
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
import { TETHER_CLIENT_CAPABILITIES, checkServer, initializationOptions } from '../core/capabilities';
import { ClientPorts, registerClientHandlers } from '../core/handlers';
import { RpcConnection, TetherApi } from '../core/rpc';
import { ConnectionStatus } from '../core/messages';
import { findDaemon, launchSettings, openSettings } from './settings';

export interface DaemonHooks {
  ports: ClientPorts;
  /** An agent edit is about to be applied to these documents. */
  onApplyEdit(uris: string[]): void;
  onReady(api: TetherApi): void | Promise<void>;
  onStopped(): void;
  onStatus(status: ConnectionStatus, message?: string): void;
}

export class Daemon implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly policy = new RestartPolicy();
  private timer: NodeJS.Timeout | undefined;
  private disposed = false;
  status: ConnectionStatus = 'down';

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly hooks: DaemonHooks,
  ) {}

  async start(): Promise<void> {
    this.setStatus('starting');
    const found = findDaemon();
    if (!found.found) {
      this.output.error(`${found.message}\nSearched:\n  ${found.searched.join('\n  ')}`);
      this.setStatus('down', found.message);
      void this.explain(found.message);
      return;
    }
    const settings = launchSettings();
    this.output.info(`Starting ${found.command} ${found.args.join(' ')} (found via ${found.source})`);
    const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
    const serverOptions: ServerOptions = {
      command: found.command,
      args: found.args,
      options: { cwd: folder?.uri.fsPath, env: { ...process.env, ...settings.env } },
    };
    const client = new LanguageClient('tether', 'Tether', serverOptions, this.clientOptions(initializationOptions(settings)));
    client.registerFeature(tetherCapabilities);
    registerClientHandlers(asRpc(client), this.hooks.ports);
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      if (this.client !== client) return;
      this.output.error(`The daemon failed to start: ${String(error)}`);
      this.crashed(client);
      return;
    }
    const check = checkServer(client.initializeResult, found.command);
    if (!check.ok) {
      this.output.error(check.message);
      this.client = undefined;
      await client.stop().catch(() => undefined);
      this.setStatus('down', check.message);
      void this.explain(check.message);
      return;
    }
    if (check.warning) {
      this.output.warn(check.warning);
      void vscode.window.showWarningMessage(check.warning);
    }
    this.policy.started(Date.now());
    this.setStatus('ready');
    await this.hooks.onReady(new TetherApi(asRpc(client)));
  }

  /** The user asked for it (command, notification action). */
  async restart(): Promise<void> {
    this.policy.reset();
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    if (client) {
      this.hooks.onStopped();
      await client.stop(5000).catch(() => undefined);
    }
    this.setStatus('down');
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await this.stop();
  }

  private clientOptions(initOptions: Record<string, unknown>): LanguageClientOptions {
    return {
      // Every file and unsaved buffer is synced, so the agent reads what the user sees.
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.output,
      initializationOptions: initOptions,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => {
          // This client is done; restarts are ours (with backoff), not the library's.
          const client = this.client;
          if (client) setImmediate(() => this.crashed(client));
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        workspace: {
          handleApplyEdit: (params, next) => {
            this.hooks.onApplyEdit(editedUris(params));
            return next(params, new vscode.CancellationTokenSource().token);
          },
        },
      },
    };
  }

  private crashed(client: LanguageClient): void {
    if (this.client !== client || this.disposed) return;
    this.client = undefined;
    this.hooks.onStopped();
    void client.dispose().catch(() => undefined);
    const delay = this.policy.crashed(Date.now());
    if (delay === null) {
      const message = 'The Tether daemon keeps exiting; it was not restarted. See the Tether output for its log.';
      this.setStatus('down', message);
      void this.explain(message);
      return;
    }
    this.output.warn(`The daemon exited; restarting in ${delay / 1000}s`);
    this.setStatus('restarting', `restarting in ${delay / 1000}s`);
    this.timer = setTimeout(() => void this.start(), delay);
  }

  private setStatus(status: ConnectionStatus, message?: string): void {
    this.status = status;
    this.hooks.onStatus(status, message);
  }

  private async explain(message: string): Promise<void> {
    const pick = await vscode.window.showErrorMessage(message, 'Configure', 'Show Log', 'Retry');
    if (pick === 'Configure') await openSettings();
    else if (pick === 'Show Log') this.output.show();
    else if (pick === 'Retry') await this.restart();
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
