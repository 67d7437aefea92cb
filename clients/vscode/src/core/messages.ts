/** Messages between the extension host and the chat webview (`postMessage` both ways). */
import { ChatAction } from './chatState';
import { Attachment } from './mentions';
import { SetupActionId, SetupState } from './setup';
import { Mode } from './wire';

export type ConnectionStatus = 'starting' | 'ready' | 'restarting' | 'down';

/** The daemon as the chat header and the set-up card show it. */
export interface ConnectionView {
  status: ConnectionStatus;
  message?: string;
  /** What keeps the user from a first prompt, with buttons that fix it; null when nothing. */
  setup: SetupState | null;
  /** The model new sessions use, as shown (`claude-sonnet-4-6`), and its full spec. */
  model: string | null;
  modelDetail?: string;
  /** More than one workspace folder: the header names the session's. */
  multiRoot: boolean;
}

export type ToWebview =
  | { type: 'action'; action: ChatAction }
  | { type: 'fileResults'; requestId: number; items: { path: string }[] }
  | { type: 'attach'; attachment: Attachment }
  | { type: 'connection'; connection: ConnectionView }
  /** A prompt that could not be sent goes back into the prompt box. */
  | { type: 'restorePrompt'; text: string; attachments: Attachment[] }
  | { type: 'focusPrompt' };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'prompt'; text: string; attachments: Attachment[] }
  | { type: 'stop' }
  | { type: 'setMode'; mode: Mode }
  | { type: 'searchFiles'; requestId: number; query: string }
  | { type: 'openFile'; uri: string; line?: number }
  | { type: 'openDiff'; toolCallId: string; uri: string }
  | { type: 'undoTurn'; turnId: string }
  | { type: 'reviewTurn'; turnId: string }
  | { type: 'answerPermission'; toolCallId: string; optionId: string; feedback?: string }
  /** The card's "Review diff" and "Open dialog" for a question still open. */
  | { type: 'reviewPermission'; toolCallId: string }
  | { type: 'reopenPermission'; toolCallId: string }
  | { type: 'setupAction'; action: SetupActionId }
  | { type: 'copy'; text: string }
  | { type: 'pickSession' }
  | { type: 'addSelection' }
  /** A message for the user (e.g. an image too big to attach). */
  | { type: 'warn'; message: string };

// A Record, so adding a message type without listing it here is a compile error.
const FROM_TYPES: Record<FromWebview['type'], true> = {
  ready: true, prompt: true, stop: true, setMode: true, searchFiles: true,
  openFile: true, openDiff: true, undoTurn: true, reviewTurn: true, answerPermission: true,
  reviewPermission: true, reopenPermission: true, setupAction: true, copy: true,
  pickSession: true, addSelection: true, warn: true,
};

/** Webview content is less trusted than the host: check the envelope before dispatching. */
export function isFromWebview(message: unknown): message is FromWebview {
  if (typeof message !== 'object' || message === null) return false;
  const type = (message as { type?: unknown }).type;
  return typeof type === 'string' && Object.prototype.hasOwnProperty.call(FROM_TYPES, type);
}
