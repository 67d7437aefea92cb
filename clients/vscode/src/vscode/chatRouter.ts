/** What the chat webview's messages do: prompts, stop, mode, sessions, files, diffs, answers,
 * the set-up card's buttons. */
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { findTool } from '../core/chatState';
import { insideWorkspace } from '../core/confine';
import { rankPaths } from '../core/fuzzy';
import { FromWebview } from '../core/messages';

import { buildPrompt } from '../core/mentions';
import { ChatController } from '../core/session';
import { uriKey } from '../core/uri';
import { ChatView } from './chatView';
import { DiffDocuments } from './diffDocuments';
import { PermissionDialog } from './permissionDialog';
import { runSetupCommand } from './setupNotice';

const EXCLUDE = '**/{node_modules,.git,.venv,venv,__pycache__,dist,out}/**';
const FILE_CACHE_MS = 10_000;

export interface RouterDeps {
  controller: ChatController;
  view: ChatView;
  permissions: PermissionDialog;
  diffs: DiffDocuments;
  /** Whether a prompt can go to the daemon now (running, with a model and its key). */
  canSend(): boolean;
  /** Resolves once the daemon's start under way (if any) has finished. */
  settled(): Promise<void>;
}

export class ChatRouter {
  private files: { at: number; paths: string[] } | null = null;
  private readonly controller: ChatController;
  private readonly view: ChatView;
  private readonly permissions: PermissionDialog;
  private readonly diffs: DiffDocuments;

  constructor(private readonly deps: RouterDeps) {
    ({ controller: this.controller, view: this.view, permissions: this.permissions, diffs: this.diffs } = deps);
  }

  async handle(message: FromWebview): Promise<void> {
    switch (message.type) {
      case 'ready':
      case 'focus':
        return;
      case 'prompt': {
        // Sent while the daemon starts: it goes once the start has finished.
        if (!this.deps.canSend()) await this.deps.settled();
        if (!this.deps.canSend()) {
          // Not ready (no daemon, model or key): the words stay in the box, the card says why.
          this.view.post({ type: 'restorePrompt', text: message.text, attachments: message.attachments });
          return;
        }
        const blocks = buildPrompt(message.text, message.attachments, resolveMention);
        if (blocks.length) void this.controller.send(blocks);
        return;
      }
      case 'stop':
        return this.controller.stop();
      case 'setMode':
        return this.controller.setMode(message.mode);
      case 'pickSession':
        await vscode.commands.executeCommand('tether.pickSession');
        return;
      case 'searchFiles':
        this.view.post({ type: 'fileResults', requestId: message.requestId, items: rankPaths(await this.workspaceFiles(), message.query).map((p) => ({ path: p })) });
        return;
      case 'openFile':
        return this.openFile(message.uri, message.line);
      case 'openDiff':
        return this.openToolDiff(message.toolCallId, message.uri);
      case 'undoTurn':
        await vscode.commands.executeCommand('tether.undoTurn', message.turnId);
        return;
      case 'reviewTurn':
        await vscode.commands.executeCommand('tether.reviewTurn', message.turnId);
        return;
      case 'addSelection':
        await vscode.commands.executeCommand('tether.addSelection');
        return;
      case 'answerPermission':
        this.permissions.pending.answer({ sessionId: message.sessionId, toolCallId: message.toolCallId }, message.optionId, message.feedback);
        return;
      case 'reviewPermission':
        return this.permissions.reviewDiff({ sessionId: message.sessionId, toolCallId: message.toolCallId });
      case 'setupAction':
        return runSetupCommand(message.action);
      case 'copy':
        await vscode.env.clipboard.writeText(message.text);
        return;
      case 'warn':
        void vscode.window.showWarningMessage(`Tether: ${message.message}`);
        return;
    }
  }

  /** Open a file the chat links to (a card's location, a link in the agent's text): only a
   * file of the workspace, whatever the link says (`..`, a symlink out of it, another scheme). */
  private async openFile(link: string, line: number | undefined): Promise<void> {
    let uri: vscode.Uri | undefined;
    try {
      uri = vscode.Uri.parse(link, true);
    } catch {
      uri = undefined;
    }
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
    if (!uri || uri.scheme !== 'file' || !insideWorkspace(uri.fsPath, { folders, platform: process.platform, realpath })) {
      void vscode.window.showWarningMessage(`Tether: the chat opens files of this workspace only; ${uri?.scheme === 'file' ? uri.fsPath : link} is outside it.`);
      return;
    }
    const at = Math.max(0, line ?? 0);
    await vscode.window.showTextDocument(uri, { preview: true, selection: new vscode.Range(at, 0, at, 0) });
  }

  private async openToolDiff(toolCallId: string, uri: string): Promise<void> {
    const card = findTool(this.controller.state, toolCallId);
    const diff = card?.content.find((c) => c.type === 'diff' && uriKey(c.uri) === uriKey(uri));
    if (!card || diff?.type !== 'diff') return;
    const name = vscode.workspace.asRelativePath(vscode.Uri.parse(uri));
    await this.diffs.openToolDiff(uri, diff, 'new', `${name} (${card.title})`);
  }

  private async workspaceFiles(): Promise<string[]> {
    if (this.files && Date.now() - this.files.at < FILE_CACHE_MS) return this.files.paths;
    const uris = await vscode.workspace.findFiles('**/*', EXCLUDE, 5000);
    const paths = uris.map((u) => vscode.workspace.asRelativePath(u, false)).sort();
    this.files = { at: Date.now(), paths };
    return paths;
  }
}

/** `@path` → a file URI: relative to a workspace folder, or absolute. */
function resolveMention(mention: string): string | undefined {
  const candidates = path.isAbsolute(mention)
    ? [mention]
    : (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => path.join(f.uri.fsPath, mention));
  const found = candidates.find((file) => fs.existsSync(file));
  return found ? vscode.Uri.file(found).toString() : undefined;
}

function realpath(file: string): string | undefined {
  try {
    return fs.realpathSync.native(file);
  } catch {
    return undefined;
  }
}
