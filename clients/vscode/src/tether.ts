/**
 * Composition root: builds the pieces and wires them together, on first use. Behaviour lives
 * in the modules; `core/` holds everything that does not need VS Code (and is unit-tested).
 *
 * `extension.ts`, the entry point VS Code loads when the extension activates, registers
 * only what must exist before any use (the quick fix, the views, the commands) and loads
 * this module, bundled apart, the first time one of them is used. Starting here means
 * starting the daemon.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { FolderRef, savingCall, savedElsewhere } from './core/chatState';
import { ConnectionView } from './core/messages';
import { toComposer } from './core/mentions';
import { QuestionKey } from './core/permissions';
import { TetherApi } from './core/rpc';
import { ChatController } from './core/session';
import { SetupState, badDaemon, daemonDown, missingDaemon, modelName, modelSetup } from './core/setup';
import { ChangeTracker } from './core/turns';
import { uriKey } from './core/uri';
import { ContentBlock } from './core/wire';
import { ApiKey } from './vscode/apiKey';
import { ChangesView } from './vscode/changesView';
import { ChatRouter } from './vscode/chatRouter';
import { ChatView } from './vscode/chatView';
import { attachFile, commandHandlers } from './vscode/commands';
import { Daemon, DaemonState, connectionStatus } from './vscode/daemon';
import { forwardDiagnostics } from './vscode/diagnosticsForwarder';
import { DiffDocuments } from './vscode/diffDocuments';
import { saveDocuments } from './vscode/documents';
import { fixCommands } from './vscode/fixes';
import { HunkReview } from './vscode/hunkReview';
import { bundledWheel, installDaemon } from './vscode/installer';
import { noticeSetup } from './vscode/setupNotice';
import { PermissionDialog } from './vscode/permissionDialog';
import { launchSettings } from './vscode/settings';
import { SHOW_QUESTION, StatusBar } from './vscode/statusBar';

/** The session a window had open, so a reload comes back to it. */
const SESSION_KEY = 'tether.sessionId';

/** Tether once in use: what the entry point forwards to. */
export interface Tether {
  /** The implementation of every contributed command, by id. */
  commands: Record<string, (...args: unknown[]) => unknown>;
  chat: vscode.WebviewViewProvider;
  changes: vscode.TreeDataProvider<unknown>;
  dispose(): Promise<void>;
}

/** `activationMs`: how long activating took, before this first use (for the log). */
export function start(context: vscode.ExtensionContext, facts: { activationMs?: number }): Tether {
  const output = vscode.window.createOutputChannel('Tether', { log: true });
  if (facts.activationMs !== undefined) output.info(`Activated in ${facts.activationMs.toFixed(1)} ms (quick fix, views and commands; nothing started until this first use)`);
  // A big file's diff is a region: the tracker puts it into the open document's text.
  const openDocument = (uri: string) => vscode.workspace.textDocuments.find((d) => uriKey(d.uri.toString()) === uriKey(uri));
  const tracker = new ChangeTracker((uri) => openDocument(uri)?.getText());
  const diffs = new DiffDocuments();
  const status = new StatusBar();
  const apiKey = new ApiKey(context.secrets);
  let api: TetherApi | null = null;
  let setup: SetupState | null = null;

  const controller = new ChatController({
    folders,
    preferredFolder: () => {
      const uri = vscode.window.activeTextEditor?.document.uri;
      return uri ? vscode.workspace.getWorkspaceFolder(uri)?.uri.toString() : undefined;
    },
    mode: launchSettings().permissionMode ?? 'default',
    onAction: (action) => {
      view.post({ type: 'action', action });
      renderStatus();
      if (action.type === 'reset' || action.type === 'rewound') changes.refresh();
      if (action.type === 'update' && action.live && action.update.kind === 'user_message') {
        void vscode.commands.executeCommand('setContext', 'tether.prompted', true);
      }
    },
    onLoaded: (loaded) => {
      tracker.load(loaded.sessionId, loaded.history, loaded.rewindableTurns);
      // Its questions still open (asked while another session was shown) go on its cards.
      permissions.replay(loaded.sessionId);
      renderStatus();
    },
    onSessionChanged: (sessionId) => {
      void context.workspaceState.update(SESSION_KEY, sessionId ?? undefined);
      void review.listAll();
    },
  });
  // The active session's hunks, in the editors and the Changes view.
  const review: HunkReview = new HunkReview({ api: () => api, sessionId: () => controller.sessionId, output, extensionUri: context.extensionUri });
  const permissions: PermissionDialog = new PermissionDialog(diffs, {
    show: (key, question, extra) => {
      // A question belongs to its session's transcript; another session's waits (`replay`).
      if (key.sessionId !== controller.sessionId) return;
      controller.dispatch({
        type: 'question',
        sessionId: key.sessionId,
        toolCallId: key.toolCallId,
        question,
        answered: extra.answered,
        call: extra.call && { title: extra.call.title, toolKind: extra.call.toolKind, rawInput: extra.call.rawInput },
      });
    },
    chatVisible: () => view.visible,
    chatFocused: () => view.hasFocus,
    shownSession: () => controller.sessionId,
    showSession: (sessionId) => controller.loadSession(sessionId),
    sessionTitle: async (sessionId) => {
      for (const group of await controller.listSessions()) {
        const found = group.sessions.find((s) => s.sessionId === sessionId);
        if (found) return found.title ?? undefined;
      }
      return undefined;
    },
    revealChat: (toolCallId) => view.reveal(toolCallId),
    wantsDialog: () => vscode.workspace.getConfiguration('tether').get<boolean>('permissionDialog', false),
    sessionFolder: (sessionId) => (controller.sessionId === sessionId ? controller.state.folder?.name : undefined) ?? (folders().length === 1 ? folders()[0].name : undefined),
    onDidChange: () => renderStatus(),
  });
  /** The status item: the shown session's state, and questions of sessions not shown. */
  const renderStatus = (): void => {
    const elsewhere = permissions.pending
      .list()
      .filter((open) => open.key.sessionId !== controller.sessionId)
      .map((open) => ({ key: open.key, title: open.call?.title ?? open.question.message }));
    status.render(controller.state, elsewhere);
  };
  const view: ChatView = new ChatView(context.extensionUri, {
    snapshot: () => [
      { type: 'connection', connection: connection() },
      { type: 'action', action: { type: 'reset', state: controller.state } },
    ],
    onMessage: (message) => router.handle(message),
    onRejected: (reason) => output.warn(`Ignored a message from the chat view: ${reason}`),
  });
  const canSend = () => api !== null && setup === null;
  const router = new ChatRouter({ controller, view, permissions, diffs, canSend, settled: () => daemon.settled() });

  /** Run a turn for `prompt` about `file`, or keep it in the prompt box while Tether is not ready. */
  const ask = async (prompt: ContentBlock[], file: vscode.Uri): Promise<void> => {
    await view.focus();
    // The first use starts the daemon: a quick fix chosen then waits for it.
    await daemon.settled();
    if (canSend()) void controller.send(prompt, vscode.workspace.getWorkspaceFolder(file)?.uri.toString());
    else view.post({ type: 'restorePrompt', ...toComposer(prompt) });
  };

  function connection(): ConnectionView {
    const state = daemon?.state ?? { status: 'starting' };
    const model = state.status === 'ready' ? state.facts.model : null;
    return {
      status: connectionStatus(state),
      message: 'message' in state ? state.message : undefined,
      setup,
      model: model ? modelName(model) : null,
      modelDetail: model && state.status === 'ready' ? `${model}${state.facts.modelSource ? ` (from ${state.facts.modelSource})` : ''}` : undefined,
      multiRoot: folders().length > 1,
    };
  }

  function onState(state: DaemonState): void {
    setup = setupFor(state, bundledWheel(context.extensionUri) !== undefined);
    const info = connection();
    status.setConnection(info.status, setup?.title ?? info.message);
    renderStatus();
    view.post({ type: 'connection', connection: info });
    void vscode.commands.executeCommand('setContext', 'tether.daemonReady', state.status === 'ready');
    void vscode.commands.executeCommand('setContext', 'tether.modelReady', state.status === 'ready' && setup === null);
    // The chat, when open, shows the problem with its buttons; otherwise say it once here.
    if (setup && state.status !== 'ready') void noticeSetup(setup, () => view.visible);
  }

  const managedEnv = path.join(context.globalStorageUri.fsPath, 'daemon');
  /** Documents (`uriKey`) that had unsaved changes of the user's when an edit came, with
   * the edit's label: the save that follows took those changes along. */
  const unsavedBeforeEdit = new Map<string, string | undefined>();
  const daemon = new Daemon(output, {
    managedEnv,
    ports: {
      onSessionUpdate: (params) => {
        tracker.apply(params.sessionId, params.turnId, params.update);
        review.onSessionUpdate(params);
        if (params.update.kind === 'turn_end') permissions.pending.withdrawSession(params.sessionId);
        controller.onSessionUpdate(params);
      },
      askPermission: (params, token) => permissions.ask(params, token),
      // Saving an edit saves the whole buffer: lines the user had not saved go along (disk
      // and buffer must agree for the commands that follow). The running call's card says so;
      // a save no call of the chat made (an undo, a rewind, another session's edit) says it
      // in a notification naming the operation, never on an old card.
      saveDocuments: async (uris) => {
        await saveDocuments(uris);
        for (const uri of uris) {
          const key = uriKey(uri);
          if (!unsavedBeforeEdit.has(key)) continue;
          const label = unsavedBeforeEdit.get(key);
          unsavedBeforeEdit.delete(key);
          if (savingCall(controller.state, uri)) controller.dispatch({ type: 'savedUserEdits', uri });
          else void vscode.window.showInformationMessage(savedElsewhere(vscode.workspace.asRelativePath(vscode.Uri.parse(uri)), label));
        }
      },
    },
    environment: () => apiKey.environment(),
    onApplyEdit: (uris, label) =>
      uris.forEach((uri) => {
        tracker.touch(uri);
        if (openDocument(uri)?.isDirty) unsavedBeforeEdit.set(uriKey(uri), label);
      }),
    onReady: async (ready) => {
      api = ready;
      await controller.attach(ready, context.workspaceState.get<string>(SESSION_KEY)).catch((error: unknown) => {
        output.error(`Could not load the session: ${error instanceof Error ? error.message : String(error)}`);
      });
    },
    onStopped: () => {
      api = null;
      void review.listAll();
      permissions.pending.withdrawAll();
      controller.detach();
    },
    onState,
  });
  const changes = new ChangesView(
    tracker,
    diffs,
    {
      activeSession: () => controller.sessionId,
      rewind: async (turnId) => {
        const sessionId = controller.sessionId;
        const restored = await controller.rewind(turnId);
        if (sessionId) tracker.rewound(sessionId, turnId);
        return restored;
      },
    },
    review,
  );

  context.subscriptions.push(
    output,
    diffs,
    status,
    view,
    review,
    changes,
    forwardDiagnostics(tracker, () => api),
    apiKey.onDidChange(() => void daemon.restart()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('tether.path') || e.affectsConfiguration('tether.model') || e.affectsConfiguration('tether.env')) {
        void daemon.restart();
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => view.post({ type: 'connection', connection: connection() })),
    // The status item's way to a question of a session the chat does not show.
    vscode.commands.registerCommand(SHOW_QUESTION, (key: QuestionKey) => permissions.reveal(key)),
  );
  void daemon.start();
  const install = () => installDaemon({ extensionUri: context.extensionUri, envDir: managedEnv, output, restart: () => daemon.restart() });
  return {
    commands: {
      ...commandHandlers({ controller, view, daemon, output, apiKey, install }),
      ...fixCommands({ ask, attachFile: (uri) => attachFile(view, uri) }),
      ...changes.commands(),
      ...review.commands(),
    },
    chat: view,
    changes: changes as vscode.TreeDataProvider<unknown>,
    dispose: () => daemon.dispose(),
  };
}

/** The window's workspace folders that can hold sessions (local ones). */
function folders(): FolderRef[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => ({ uri: f.uri.toString(), name: f.name }));
}

function setupFor(state: DaemonState, canInstall: boolean): SetupState | null {
  switch (state.status) {
    case 'missing':
      return missingDaemon(state.resolution, canInstall);
    case 'incompatible':
      return badDaemon(state.check, canInstall);
    case 'crashed':
      return daemonDown(state.message);
    case 'ready':
      return modelSetup(state.facts, state.env);
    default:
      return null;
  }
}

