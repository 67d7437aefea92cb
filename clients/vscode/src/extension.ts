/**
 * Composition root: builds the pieces and wires them together. Behaviour lives in the
 * modules; `core/` holds everything that does not need VS Code (and is unit-tested).
 */
import * as vscode from 'vscode';
import { TetherApi } from './core/rpc';
import { ChatController } from './core/session';
import { ChangeTracker } from './core/turns';
import { ChangesView } from './vscode/changesView';
import { ChatRouter } from './vscode/chatRouter';
import { ChatView } from './vscode/chatView';
import { registerCommands } from './vscode/commands';
import { Daemon } from './vscode/daemon';
import { forwardDiagnostics } from './vscode/diagnosticsForwarder';
import { DiffDocuments } from './vscode/diffDocuments';
import { saveDocuments } from './vscode/documents';
import { PermissionDialog } from './vscode/permissionDialog';
import { launchSettings } from './vscode/settings';
import { StatusBar } from './vscode/statusBar';

let daemon: Daemon | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Tether', { log: true });
  const tracker = new ChangeTracker();
  const diffs = new DiffDocuments();
  const status = new StatusBar();
  let api: TetherApi | null = null;
  let changes: ChangesView | undefined;

  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  const controller = new ChatController({
    workspaceFolder: folder?.uri.toString(),
    mode: launchSettings().permissionMode ?? 'default',
    onAction: (action) => {
      view.post({ type: 'action', action });
      status.render(controller.state);
      if (action.type === 'reset' || action.type === 'rewound') changes?.refresh();
    },
  });
  const permissions = new PermissionDialog(diffs, {
    awaiting: (id, awaiting, choices) => controller.setAwaitingPermission(id, awaiting, choices),
  });
  const view: ChatView = new ChatView(context.extensionUri, {
    snapshot: () => [
      { type: 'connection', status: daemon?.status ?? 'starting' },
      { type: 'action', action: { type: 'reset', state: controller.state } },
    ],
    onMessage: (message) => router.handle(message),
  });
  const router = new ChatRouter(controller, view, permissions, diffs);

  daemon = new Daemon(output, {
    ports: {
      onSessionUpdate: (params) => {
        tracker.apply(params.sessionId, params.turnId, params.update);
        if (params.update.kind === 'turn_end') permissions.pending.cancelSession(params.sessionId);
        controller.onSessionUpdate(params);
      },
      askPermission: (params, token) => permissions.ask(params, token),
      saveDocuments,
    },
    onApplyEdit: (uris) => uris.forEach((uri) => tracker.touch(uri)),
    onReady: async (ready) => {
      api = ready;
      await controller.attach(ready);
    },
    onStopped: () => {
      api = null;
      permissions.pending.cancelAll();
      controller.detach();
      tracker.clear();
    },
    onStatus: (state, message) => {
      status.setConnection(state, message);
      status.render(controller.state);
      view.post({ type: 'connection', status: state, message });
    },
  });
  changes = new ChangesView(tracker, diffs, {
    activeSession: () => controller.sessionId,
    rewind: async (turnId) => {
      const sessionId = controller.sessionId;
      const restored = await controller.rewind(turnId);
      if (sessionId) tracker.rewound(sessionId, turnId);
      return restored;
    },
  });

  context.subscriptions.push(
    output,
    diffs,
    status,
    view,
    changes,
    forwardDiagnostics(tracker, () => api),
    ...registerCommands({ controller, view, daemon, output }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('tether.path') || e.affectsConfiguration('tether.model') || e.affectsConfiguration('tether.env')) {
        void daemon?.restart();
      }
    }),
  );
  void daemon.start();
}

export async function deactivate(): Promise<void> {
  await daemon?.dispose();
  daemon = undefined;
}
