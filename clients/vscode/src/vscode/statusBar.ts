/** The status bar item: idle, working (with the running tool), waiting for an answer (on a
 * warning background) or disconnected; opens the chat. */
import * as vscode from 'vscode';
import { ChatState } from '../core/chatState';
import { StatusInput, statusText } from '../core/format';
import { ConnectionStatus } from '../core/messages';
import { QuestionKey } from '../core/permissions';

/** The command the item runs while a session the chat does not show asks: it shows it. */
export const SHOW_QUESTION = 'tether.showQuestion';

/** A question of a session the chat does not show: the call it is about. */
export interface QuestionElsewhere {
  key: QuestionKey;
  title: string;
}

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

  /** `elsewhere`: questions of sessions the chat does not show (the item leads to the first). */
  render(chat: Pick<ChatState, 'busy' | 'currentTool'> & Partial<Pick<ChatState, 'items'>>, elsewhere: QuestionElsewhere[] = []): void {
    const connected = this.connection === 'ready';
    const asking = chat.items?.find((i) => i.kind === 'tool' && i.question !== undefined);
    const other = asking ? undefined : elsewhere[0];
    const state: StatusInput = { ...chat, awaiting: asking?.kind === 'tool' ? asking.title : (other?.title ?? null) };
    this.item.text = this.connection === 'starting' ? '$(sync~spin) Tether' : statusText(state, connected);
    this.item.command = connected && other ? { command: SHOW_QUESTION, title: 'Show the session that asks', arguments: [other.key] } : 'tether.openChat';
    const what = !connected
      ? `Tether: ${this.connection}${this.detail ? ` — ${this.detail}` : ''}`
      : other
        ? `Tether is waiting for your approval in another session: ${other.title}`
        : state.awaiting
        ? `Tether is waiting for your approval: ${state.awaiting}`
        : state.busy
        ? `Tether is working${state.currentTool ? `: ${state.currentTool}` : ''}`
        : 'Tether is idle';
    this.item.tooltip = `${what}\n${connected && other ? 'Click to show that session' : 'Click to open the chat'}`;
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
