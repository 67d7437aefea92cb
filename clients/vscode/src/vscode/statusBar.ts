/** The status bar item: idle, working (with the running tool), waiting for an answer (on a
 * warning background) or disconnected; opens the chat. */
import * as vscode from 'vscode';
import { ChatState } from '../core/chatState';
import { StatusInput, statusText } from '../core/format';
import { ConnectionStatus } from '../core/messages';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('tether.status', vscode.StatusBarAlignment.Right, 100);
  private connection: ConnectionStatus = 'starting';
  private detail = '';

  constructor() {
    this.item.name = 'Tether';
    this.item.command = 'tether.openChat';
    this.item.show();
  }

  setConnection(status: ConnectionStatus, message?: string): void {
    this.connection = status;
    this.detail = message ?? '';
  }

  render(chat: Pick<ChatState, 'busy' | 'currentTool'> & Partial<Pick<ChatState, 'items'>>): void {
    const connected = this.connection === 'ready';
    const asking = chat.items?.find((i) => i.kind === 'tool' && i.question !== undefined);
    const state: StatusInput = { ...chat, awaiting: asking?.kind === 'tool' ? asking.title : null };
    this.item.text = this.connection === 'starting' ? '$(sync~spin) Tether' : statusText(state, connected);
    const what = !connected
      ? `Tether: ${this.connection}${this.detail ? ` — ${this.detail}` : ''}`
      : state.awaiting
        ? `Tether is waiting for your approval: ${state.awaiting}`
        : state.busy
        ? `Tether is working${state.currentTool ? `: ${state.currentTool}` : ''}`
        : 'Tether is idle';
    this.item.tooltip = `${what}\nClick to open the chat`;
    // A question waiting stands out: it is how the user finds a card while the chat is hidden.
    this.item.backgroundColor =
      this.connection === 'down'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : connected && state.awaiting
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    this.item.accessibilityInformation = { label: what };
  }

  dispose(): void {
    this.item.dispose();
  }
}
