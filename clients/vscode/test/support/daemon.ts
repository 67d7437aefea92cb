/**
 * Runs the real `tether serve` for protocol tests, found by the extension's own resolver
 * (the repository's .venv, else PATH), wired to the extension's own client code: the
 * handlers it registers, the chat controller, the change tracker and the permission model.
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { MessageConnection, StreamMessageReader, StreamMessageWriter, createMessageConnection } from 'vscode-jsonrpc/node';
import { ServerCheck, TETHER_CLIENT_CAPABILITIES, checkServer, initializationOptions } from '../../src/core/capabilities';
import { ChatAction } from '../../src/core/chatState';
import { EditorDiagnostic, baselineFor, diagnosticsToForward } from '../../src/core/diagnostics';
import { registerClientHandlers } from '../../src/core/handlers';
import { PendingPermissions, buildQuestion, cardQuestion } from '../../src/core/permissions';
import { resolveDaemon } from '../../src/core/resolve';
import { RpcConnection, TetherApi } from '../../src/core/rpc';
import { ChatController } from '../../src/core/session';
import { ChangeTracker } from '../../src/core/turns';
import { uriKey } from '../../src/core/uri';
import { DiagnosticsParams, Mode, PermissionOptionKind, PermissionRequestParams, SessionUpdateParams } from '../../src/core/wire';
import { FakeWorkspace } from './fakeWorkspace';

export const REPO_ROOT = path.resolve(__dirname, '../../../../..');
export const DEMO_WORKSPACE = path.join(REPO_ROOT, 'server/tether/examples/demo/workspace');

/** The daemon command, found the way the extension finds it. Throws (failing the test) if absent. */
export function daemonCommand(): { command: string; args: string[] } {
  const found = resolveDaemon({
    setting: process.env.TETHER_PATH,
    workspaceFolders: [REPO_ROOT],
    pathEnv: process.env.PATH,
    platform: process.platform,
    home: os.homedir(),
    isExecutable: (f) => {
      try {
        fs.accessSync(f, fs.constants.X_OK);
        return fs.statSync(f).isFile();
      } catch {
        return false;
      }
    },
  });
  if (!found.found) throw new Error(`tether daemon not found: ${found.message}`);
  return { command: found.command, args: found.args };
}

export interface Harness {
  root: string;
  workspace: string;
  conn: MessageConnection;
  api: TetherApi;
  files: FakeWorkspace;
  controller: ChatController;
  tracker: ChangeTracker;
  check: ServerCheck;
  updates: SessionUpdateParams[];
  actions: ChatAction[];
  permissions: PermissionRequestParams[];
  /** How the simulated user answers permission questions: by option kind, by option id
   * (with feedback), or null to leave the question open (dismissed; `pending` answers it). */
  answer: (params: PermissionRequestParams) => PermissionOptionKind | { optionId: string; feedback?: string } | null;
  /** The questions waiting for an answer, as the extension keeps them. */
  pending: PendingPermissions;
  /** `tether/diagnostics` notifications sent, in order. */
  sentDiagnostics: DiagnosticsParams[];
  /** A language server reports `diagnostics` for `uri`; forwarded as the extension does. */
  publishDiagnostics(uri: string, diagnostics: EditorDiagnostic[]): Promise<void>;
  waitFor<T>(predicate: () => T | undefined | false, what: string, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
  stderr(): string;
}

export interface HarnessOptions {
  script: unknown[];
  mode?: Mode;
  /** Reuse the data folder of an earlier run (a restarted daemon). */
  root?: string;
}

// Test folders go when the test process ends (a restarted daemon reuses one until then).
const roots = new Set<string>();
process.on('exit', () => roots.forEach((root) => fs.rmSync(root, { recursive: true, force: true })));

export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const root = options.root ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tether-vscode-'));
  roots.add(root);
  const workspace = path.join(root, 'ws');
  if (!fs.existsSync(workspace)) fs.cpSync(DEMO_WORKSPACE, workspace, { recursive: true });
  const scriptFile = path.join(root, `script-${Date.now()}-${Math.random().toString(16).slice(2)}.json`);
  fs.writeFileSync(scriptFile, JSON.stringify(options.script));

  const { command, args } = daemonCommand();
  const child: ChildProcess = spawn(command, args, {
    cwd: workspace,
    env: { ...process.env, TETHER_DATA_DIR: path.join(root, 'data'), XDG_CONFIG_HOME: path.join(root, 'config'), PYTHONUNBUFFERED: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const rpc: RpcConnection = conn;

  const updates: SessionUpdateParams[] = [];
  const actions: ChatAction[] = [];
  const permissions: PermissionRequestParams[] = [];
  const tracker = new ChangeTracker();
  const pending = new PendingPermissions();
  const folder = { uri: pathToFileURL(workspace).toString(), name: 'ws' };
  const controller = new ChatController({
    folders: () => [folder],
    mode: options.mode ?? 'default',
    onAction: (a) => actions.push(a),
    onLoaded: (loaded) => tracker.load(loaded.sessionId, loaded.history, loaded.rewindableTurns),
  });
  const files = new FakeWorkspace(conn);
  // The editor's diagnostics, and the extension's forwarding of them (diagnosticsForwarder.ts).
  const reported = new Map<string, EditorDiagnostic[]>();
  const current = (uri: string) => reported.get(uriKey(uri)) ?? [];
  let api: TetherApi | undefined;
  const sentDiagnostics: DiagnosticsParams[] = [];
  const forward = async (params: DiagnosticsParams) => {
    sentDiagnostics.push(params);
    await api?.sendDiagnostics(params);
  };
  tracker.onDidTouch((uri) => void forward(baselineFor(uri, current)));
  const publishDiagnostics = async (uri: string, diagnostics: EditorDiagnostic[]) => {
    reported.set(uriKey(uri), diagnostics);
    for (const params of diagnosticsToForward([uri], tracker.touched, current)) await forward(params);
  };
  const harness = { answer: (): PermissionOptionKind | null => 'allow_once' } as Pick<Harness, 'answer'>;

  // The same registration the extension does, with test doubles for the UI.
  registerClientHandlers(rpc, {
    onSessionUpdate: (params) => {
      updates.push(params);
      tracker.apply(params.sessionId, params.turnId, params.update);
      if (params.update.kind === 'turn_end') pending.withdrawSession(params.sessionId);
      controller.onSessionUpdate(params);
    },
    askPermission: async (params, token) => {
      permissions.push(params);
      const id = { sessionId: params.sessionId, toolCallId: params.toolCall.toolCallId };
      const question = buildQuestion(params);
      const answer = pending.open(id, question, params.toolCall);
      const cancel = token.onCancellationRequested(() => pending.withdraw(id));
      const { title, toolKind, rawInput } = params.toolCall;
      controller.dispatch({ type: 'question', ...id, question: cardQuestion(question, id.sessionId), call: { title, toolKind, rawInput } });
      const pick = harness.answer(params);
      // The "user" clicks the button the dialog shows for that option (or closes it).
      if (typeof pick === 'string') pending.answerLabel(id, question.choices.find((c) => c.kind === pick)?.label);
      else if (pick) pending.answer(id, pick.optionId, pick.feedback);
      try {
        const { outcome, answer: answered } = await answer;
        controller.dispatch({ type: 'question', ...id, question: null, answered });
        return outcome;
      } finally {
        cancel.dispose();
      }
    },
    saveDocuments: (uris) => files.save(uris),
  });
  conn.onNotification('window/logMessage', () => undefined);
  conn.listen();

  const folderUri = pathToFileURL(workspace).toString();
  const init = await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: folderUri,
    workspaceFolders: [{ uri: folderUri, name: 'ws' }],
    capabilities: {
      workspace: { applyEdit: true, workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'] }, workspaceFolders: true },
      general: { positionEncodings: ['utf-16'] },
      experimental: { tether: { ...TETHER_CLIENT_CAPABILITIES } },
    },
    initializationOptions: initializationOptions({ model: `scripted:${scriptFile}` }),
  });
  await conn.sendNotification('initialized', {});
  api = new TetherApi(rpc);
  await controller.attach(api);

  const h: Harness = Object.assign(harness, {
    root,
    workspace,
    conn,
    api,
    files,
    controller,
    tracker,
    check: checkServer(init, command),
    pending,
    publishDiagnostics,
    sentDiagnostics,
    updates,
    actions,
    permissions,
    waitFor: <T>(predicate: () => T | undefined | false, what: string, timeoutMs = 10_000) => waitFor(predicate, what, timeoutMs, () => stderr),
    stderr: () => stderr,
    stop: async () => {
      const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
      try {
        await withTimeout(conn.sendRequest('shutdown'), 5000, 'shutdown');
        await conn.sendNotification('exit');
      } catch {
        child.kill('SIGKILL');
      }
      await withTimeout(exited, 5000, 'daemon exit').catch(() => child.kill('SIGKILL'));
      conn.dispose();
    },
  });
  return h;
}

/** Poll (every 20 ms) until `predicate` returns a value; bounded. */
export async function waitFor<T>(predicate: () => T | undefined | false, what: string, timeoutMs = 10_000, log?: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = predicate();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${log ? `\n--- daemon stderr ---\n${log()}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    }),
  ]);
}
