/** Messages between the extension host and the chat webview (`postMessage` both ways). */
import { ChatAction } from './chatState';
import { Attachment, IMAGE_TYPES, MAX_IMAGE_BYTES } from './mentions';
import { Infer, array, boolean, either, integer, literal, object, oneOf, optional, string } from './schema';
import { SETUP_ACTIONS, SetupState } from './setup';
import { MODES } from './wire';

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
  | { type: 'focusPrompt' }
  /** Scroll to a card (its question) and put the focus on it, not on a button. */
  | { type: 'revealCard'; toolCallId: string };

const range = object({ start: object({ line: integer(), character: integer() }), end: object({ line: integer(), character: integer() }) });
const attachment = either(
  object({ uri: string({ nonEmpty: true }), range: optional(range), label: string() }),
  // An image's base64 text: at most the API's 5 MB, base64 makes 4/3 of it.
  object({ image: object({ mimeType: oneOf(IMAGE_TYPES), data: string({ max: Math.ceil((MAX_IMAGE_BYTES * 4) / 3) + 4 }) }), label: string() }),
);
const id = string({ nonEmpty: true, max: 200 });

/** Every message the webview may send, each with its full shape. The one source of the
 * `FromWebview` type: a message the host handles must have a schema here. */
const FROM_WEBVIEW = {
  ready: object({ type: literal('ready') }),
  prompt: object({ type: literal('prompt'), text: string(), attachments: array(attachment, 100) }),
  stop: object({ type: literal('stop') }),
  setMode: object({ type: literal('setMode'), mode: oneOf(MODES) }),
  searchFiles: object({ type: literal('searchFiles'), requestId: integer(), query: string({ max: 1000 }) }),
  openFile: object({ type: literal('openFile'), uri: string({ nonEmpty: true, max: 10_000 }), line: optional(integer()) }),
  openDiff: object({ type: literal('openDiff'), toolCallId: id, uri: string({ nonEmpty: true, max: 10_000 }) }),
  undoTurn: object({ type: literal('undoTurn'), turnId: id }),
  reviewTurn: object({ type: literal('reviewTurn'), turnId: id }),
  answerPermission: object({ type: literal('answerPermission'), sessionId: id, toolCallId: id, optionId: id, feedback: optional(string()) }),
  /** The card's "Review diff" for a question still open. */
  reviewPermission: object({ type: literal('reviewPermission'), sessionId: id, toolCallId: id }),
  setupAction: object({ type: literal('setupAction'), action: oneOf(SETUP_ACTIONS) }),
  copy: object({ type: literal('copy'), text: string() }),
  pickSession: object({ type: literal('pickSession') }),
  addSelection: object({ type: literal('addSelection') }),
  /** A message for the user (e.g. an image too big to attach). */
  warn: object({ type: literal('warn'), message: string({ max: 2000 }) }),
  /** The chat took or lost the keyboard focus (a modal question is not needed while it has it). */
  focus: object({ type: literal('focus'), focused: boolean() }),
} as const;

type Schemas = typeof FROM_WEBVIEW;
export type FromWebview = { [K in keyof Schemas]: Infer<Schemas[K]> }[keyof Schemas];
// Each schema checks the `type` its key names.
const _tags: { [K in keyof Schemas]: Infer<Schemas[K]>['type'] extends K ? true : never } = {
  ready: true, prompt: true, stop: true, setMode: true, searchFiles: true, openFile: true, openDiff: true,
  undoTurn: true, reviewTurn: true, answerPermission: true, reviewPermission: true, setupAction: true,
  copy: true, pickSession: true, addSelection: true, warn: true, focus: true,
};
void _tags;

/** Webview content is less trusted than the host: a message is checked in full against the
 * schema of its type; anything else is dropped (null) with the reason in `rejected`. */
export function parseFromWebview(message: unknown, rejected?: (reason: string) => void): FromWebview | null {
  const type = typeof message === 'object' && message !== null ? (message as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || !Object.prototype.hasOwnProperty.call(FROM_WEBVIEW, type)) {
    rejected?.(`unknown message type ${JSON.stringify(type)}`);
    return null;
  }
  const result = FROM_WEBVIEW[type as keyof Schemas](message, '');
  if (!result.ok) {
    rejected?.(`${type}: ${result.error}`);
    return null;
  }
  return result.value as FromWebview;
}
