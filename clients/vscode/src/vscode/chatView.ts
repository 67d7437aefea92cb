/**
 * The chat webview view: its HTML shell (strict CSP, theme via VS Code's CSS variables),
 * and the message pipe to and from the webview script. What messages *do* is decided by
 * `chatRouter.ts`; this file only knows how to deliver them.
 */
import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { FromWebview, ToWebview, parseFromWebview } from '../core/messages';

export const CHAT_VIEW_ID = 'tether.chat';

export interface ChatViewHooks {
  /** Messages that bring a fresh webview up to date (state snapshot, connection, …). */
  snapshot(): ToWebview[];
  onMessage(message: FromWebview): void | Promise<void>;
  /** A message from the webview that is not one it may send (a bug, or a hostile page). */
  onRejected(reason: string): void;
}

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private ready = false;
  /** The webview has the keyboard focus (it says so on focus and blur). */
  private focused = false;
  /** User intents (attach a selection, focus the prompt) sent before the webview was up. */
  private queued: ToWebview[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  /** Listeners on the current webview, disposed with it. */
  private viewDisposables: vscode.Disposable[] = [];

  /** (The provider is registered at activation, `extension.ts`, which hands the view here.) */
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly hooks: ChatViewHooks,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = this.html(view.webview, dist);
    // The view's own listeners go with it (VS Code disposes a hidden view's webview when
    // it is moved, and resolves a new one).
    this.viewDisposables.forEach((d) => d.dispose());
    this.viewDisposables = [];
    this.viewDisposables.push(view.webview.onDidReceiveMessage((raw: unknown) => {
      const message = parseFromWebview(raw, (reason) => this.hooks.onRejected(reason));
      if (!message) return;
      if (message.type === 'focus') {
        this.focused = message.focused;
        return;
      }
      if (message.type === 'ready') {
        this.ready = true;
        for (const m of [...this.hooks.snapshot(), ...this.queued]) void view.webview.postMessage(m);
        this.queued = [];
      }
      void Promise.resolve(this.hooks.onMessage(message)).catch((error: unknown) => {
        void vscode.window.showErrorMessage(`Tether: ${error instanceof Error ? error.message : String(error)}`);
      });
    }));
    this.viewDisposables.push(view.onDidChangeVisibility(() => {
      if (!view.visible) this.focused = false;
    }));
    this.viewDisposables.push(view.onDidDispose(() => {
      if (this.view !== view) return;
      this.view = undefined;
      this.focused = false;
      this.ready = false;
      this.viewDisposables.forEach((d) => d.dispose());
      this.viewDisposables = [];
    }));
  }

  /** Deliver to the webview if it is up. Otherwise state changes are covered by the next
   * snapshot, and user intents wait for the webview. */
  post(message: ToWebview): void {
    if (this.view && this.ready) void this.view.webview.postMessage(message);
    else if (message.type === 'attach' || message.type === 'focusPrompt' || message.type === 'restorePrompt' || message.type === 'revealCard') this.queued.push(message);
  }

  /** Reveal the view and put the caret in the prompt box. */
  async focus(): Promise<void> {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
    this.post({ type: 'focusPrompt' });
  }

  /** Bring the chat into view without taking the focus from the editor, scrolled to the
   * card of `toolCallId` when given. */
  async reveal(toolCallId?: string): Promise<void> {
    if (this.view) this.view.show(true);
    else await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
    if (toolCallId) this.post({ type: 'revealCard', toolCallId });
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** The user is in the chat: it is visible and has the keyboard focus. */
  get hasFocus(): boolean {
    return this.visible && this.focused;
  }

  private html(webview: vscode.Webview, dist: vscode.Uri): string {
    const nonce = crypto.randomBytes(16).toString('base64');
    const asset = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(dist, name)).toString();
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${asset('codicon.css')}">
<link rel="stylesheet" href="${asset('chat.css')}">
<title>Tether</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${asset('webview.js')}"></script>
</body>
</html>`;
  }

  dispose(): void {
    this.viewDisposables.forEach((d) => d.dispose());
    this.disposables.forEach((d) => d.dispose());
  }
}
