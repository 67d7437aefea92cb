/** Messages between the extension host and the chat webview (`postMessage` both ways). */
import { ChatAction } from './chatState';
import { Attachment } from './mentions';
import { Mode } from './wire';

export type ConnectionStatus = 'starting' | 'ready' | 'restarting' | 'down';

export type ToWebview =
  | { type: 'action'; action: ChatAction }
  | { type: 'fileResults'; requestId: number; items: { path: string }[] }
  | { type: 'attach'; attachment: Attachment }
  | { type: 'connection'; status: ConnectionStatus; message?: string }
  | { type: 'focusPrompt' };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'prompt'; text: string; attachments: Attachment[] }
  | { type: 'stop' }
  | { type: 'setMode'; mode: Mode }
  | { type: 'newSession' }
  | { type: 'searchFiles'; requestId: number; query: string }
  | { type: 'openFile'; uri: string; line?: number }
  | { type: 'openDiff'; toolCallId: string; uri: string }
  | { type: 'undoTurn'; turnId: string }
  | { type: 'reviewTurn'; turnId: string }
  | { type: 'answerPermission'; toolCallId: string; optionId: string }
  | { type: 'pickSession' }
  | { type: 'addSelection' };

// A Record, so adding a message type without listing it here is a compile error.
const FROM_TYPES: Record<FromWebview['type'], true> = {
  ready: true, prompt: true, stop: true, setMode: true, newSession: true, searchFiles: true,
  openFile: true, openDiff: true, undoTurn: true, reviewTurn: true, answerPermission: true,
  pickSession: true, addSelection: true,
};

/** Webview content is less trusted than the host: check the envelope before dispatching. */
export function isFromWebview(message: unknown): message is FromWebview {
  if (typeof message !== 'object' || message === null) return false;
  const type = (message as { type?: unknown }).type;
  return typeof type === 'string' && Object.prototype.hasOwnProperty.call(FROM_TYPES, type);
}
