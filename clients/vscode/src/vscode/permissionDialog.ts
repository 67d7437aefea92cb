/**
 * Permission questions. The chat card is the question: it shows the call, the choices
 * (Allow once · Always allow `<rule>` · Reject, with an optional reason · Always reject) and
 * "Review diff". Nothing takes the focus or the keys from what the user is doing: when the
 * chat is out of sight, a notification (and the status bar item) points to the card. A
 * question belongs to its session: it is on that session's card only; while the chat shows
 * another session, the notification names the asking one and "Show Session" switches to it.
 * A modal dialog asks as well only when the user turned it on (`tether.permissionDialog`) and
 * is not already looking at the card (the chat visible and focused), and then its first
 * button, the one Enter presses, allows nothing.
 *
 * Closing a dialog or a notification answers nothing: the question stays on the card. The
 * proposed-change tabs "Review diff" opened close once the question is answered.
 */
import * as vscode from 'vscode';
import { CardQuestion } from '../core/chatState';
import { CancelToken } from '../core/rpc';
import { Answer, PendingPermissions, QuestionKey, REVIEW_DIFF, buildQuestion, cardQuestion } from '../core/permissions';
import { PermissionOutcome, PermissionRequestParams } from '../core/wire';
import { DiffDocuments } from './diffDocuments';

export const SHOW_IN_CHAT = 'Show in Chat';
export const SHOW_SESSION = 'Show Session';
const NOT_NOW = 'Not Now';

export interface PermissionHooks {
  /** Show the open question on the call's card in its session's transcript, or (null) how
   * it ended. A session not shown in the chat gets it when it is shown (`replay`). */
  show(key: QuestionKey, question: CardQuestion | null, extra: { answered?: Answer; call?: PermissionRequestParams['toolCall'] }): void;
  chatVisible(): boolean;
  /** The chat view has the keyboard focus (the user is looking at its cards). */
  chatFocused(): boolean;
  /** The session the chat shows. */
  shownSession(): string | null;
  /** Show `sessionId` in the chat (its questions come with it). */
  showSession(sessionId: string): Promise<void>;
  /** How the user knows a session (its title), for a question from one not shown. */
  sessionTitle(sessionId: string): Promise<string | undefined>;
  /** Bring the chat into view, at the card of `toolCallId`. */
  revealChat(toolCallId?: string): Promise<void>;
  /** Also ask in a modal dialog (the user's setting). */
  wantsDialog(): boolean;
  /** The name of the workspace folder a session works in (its "always" rules go there). */
  sessionFolder(sessionId: string): string | undefined;
  /** The open questions changed (the status bar names those of sessions not shown). */
  onDidChange?(): void;
}

export class PermissionDialog {
  readonly pending = new PendingPermissions();
  /** Proposed-change tabs opened for a question, closed when it is answered. */
  private readonly proposed = new Map<string, vscode.Uri[]>();

  constructor(
    private readonly diffs: DiffDocuments,
    private readonly hooks: PermissionHooks,
  ) {}

  async ask(params: PermissionRequestParams, token: CancelToken): Promise<PermissionOutcome> {
    const key: QuestionKey = { sessionId: params.sessionId, toolCallId: params.toolCall.toolCallId };
    const question = buildQuestion(params, (uri) => vscode.workspace.asRelativePath(vscode.Uri.parse(uri)), this.hooks.sessionFolder(params.sessionId));
    const answer = this.pending.open(key, question, params.toolCall);
    const cancel = token.onCancellationRequested(() => this.pending.withdraw(key));
    this.hooks.show(key, cardQuestion(question, key.sessionId), { call: params.toolCall });
    this.hooks.onDidChange?.();
    const shown = this.hooks.shownSession() === key.sessionId;
    // The modal only when the user is not already looking at the card (setting on).
    const looking = shown && this.hooks.chatVisible() && this.hooks.chatFocused();
    if (question.kind !== 'plan' && this.hooks.wantsDialog() && !looking) void this.dialog(key);
    else if (!shown) void this.pointElsewhere(key, params.toolCall.title);
    else if (question.kind === 'plan') void this.point(key, 'Tether has a plan ready for your review.', 'Review Plan');
    else void this.point(key, `Tether needs your approval: ${params.toolCall.title}`, SHOW_IN_CHAT);
    try {
      const { outcome, answer: answered } = await answer;
      this.hooks.show(key, null, { answered });
      return outcome;
    } catch (error) {
      this.hooks.show(key, null, {});
      throw error;
    } finally {
      cancel.dispose();
      this.hooks.onDidChange?.();
      void this.closeProposed(key);
    }
  }

  /** The open questions of `sessionId`, on its cards: it is the session shown now. */
  replay(sessionId: string): void {
    for (const open of this.pending.list(sessionId)) this.hooks.show(open.key, cardQuestion(open.question, sessionId), { call: open.call });
  }

  /** The chat at the question's card, in its session (switched to when another is shown). */
  async reveal(key: QuestionKey): Promise<void> {
    if (this.hooks.shownSession() !== key.sessionId) await this.hooks.showSession(key.sessionId);
    await this.hooks.revealChat(key.toolCallId);
  }

  /** The modal dialog (only when the user asked for dialogs). The first button, which has
   * the focus and which Enter presses, is "Show in Chat"; Escape is "Not Now". */
  async dialog(key: QuestionKey): Promise<void> {
    const question = this.pending.question(key);
    if (!question || question.kind === 'plan') return;
    const elsewhere = this.hooks.shownSession() !== key.sessionId ? await this.elsewhere(key.sessionId) : '';
    const items: vscode.MessageItem[] = [
      { title: SHOW_IN_CHAT },
      ...(question.diffs.length ? [{ title: REVIEW_DIFF }] : []),
      ...question.choices.map((c) => ({ title: c.label })),
      { title: NOT_NOW, isCloseAffordance: true },
    ];
    const picked = await vscode.window.showWarningMessage(`${question.message}${elsewhere}`, { modal: true, detail: question.detail }, ...items);
    if (picked?.title === SHOW_IN_CHAT) await this.reveal(key);
    else if (picked?.title === REVIEW_DIFF) await this.reviewDiff(key);
    else this.pending.answerLabel(key, picked?.title);
  }

  /** Open the proposed change in the diff editor, beside the chat whose card answers it. */
  async reviewDiff(key: QuestionKey): Promise<void> {
    const question = this.pending.question(key);
    if (!question) return;
    const opened: vscode.Uri[] = [];
    for (const d of question.diffs) {
      const name = vscode.workspace.asRelativePath(vscode.Uri.parse(d.uri));
      opened.push(await this.diffs.openToolDiff(d.uri, d, 'old', `${name} (proposed by Tether)`));
    }
    const id = proposedId(key);
    this.proposed.set(id, [...(this.proposed.get(id) ?? []), ...opened]);
    // Answered meanwhile (the diff took a moment): nothing left to review.
    if (!this.pending.isPending(key)) await this.closeProposed(key);
    else if (!this.hooks.chatVisible() || this.hooks.shownSession() !== key.sessionId) await this.reveal(key);
  }

  /** A notification that points to the card, when the chat is out of sight. It answers
   * nothing itself, and never takes the focus. */
  private async point(key: QuestionKey, message: string, show: string): Promise<void> {
    if (this.hooks.chatVisible()) return;
    const question = this.pending.question(key);
    const extra = question?.diffs.length ? [REVIEW_DIFF] : [];
    const picked = await vscode.window.showInformationMessage(message, show, ...extra);
    if (!this.pending.isPending(key)) return;
    if (picked === show) await this.reveal(key);
    else if (picked === REVIEW_DIFF) await this.reviewDiff(key);
  }

  /** A question of a session the chat does not show: the notification names the session,
   * and "Show Session" switches the chat to it, at the card. Shown whether or not the chat
   * is visible: the visible transcript is another session's. */
  private async pointElsewhere(key: QuestionKey, title: string): Promise<void> {
    const question = this.pending.question(key);
    const what = question?.kind === 'plan' ? 'has a plan ready for your review' : `needs your approval: ${title}`;
    const extra = question?.diffs.length ? [REVIEW_DIFF] : [];
    const picked = await vscode.window.showInformationMessage(`Tether${await this.elsewhere(key.sessionId)} ${what}`, SHOW_SESSION, ...extra);
    if (!this.pending.isPending(key)) return;
    if (picked === SHOW_SESSION) await this.reveal(key);
    else if (picked === REVIEW_DIFF) await this.reviewDiff(key);
  }

  /** " (in the session "…")": where a question of a session not shown comes from. */
  private async elsewhere(sessionId: string): Promise<string> {
    const title = await this.hooks.sessionTitle(sessionId).catch(() => undefined);
    return title ? ` (in the session "${title}")` : ' (in another session)';
  }

  private async closeProposed(key: QuestionKey): Promise<void> {
    const id = proposedId(key);
    const uris = this.proposed.get(id);
    this.proposed.delete(id);
    if (uris?.length) await this.diffs.closeDiffs(uris);
  }
}

function proposedId(key: QuestionKey): string {
  return JSON.stringify([key.sessionId, key.toolCallId]);
}
