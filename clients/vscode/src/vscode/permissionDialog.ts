/**
 * Permission questions. The chat card is the question: it shows the call, the choices
 * (Allow once · Always allow `<rule>` · Reject, with an optional reason · Always reject) and
 * "Review diff". Nothing takes the focus or the keys from what the user is doing: when the
 * chat is out of sight, a notification (and the status bar item) points to the card. A modal
 * dialog asks as well only when the user turned it on (`tether.permissionDialog`), and then
 * its first button, the one Enter presses, allows nothing.
 *
 * Closing a dialog or a notification answers nothing: the question stays on the card. The
 * proposed-change tabs "Review diff" opened close once the question is answered.
 */
import * as vscode from 'vscode';
import { CardQuestion } from '../core/chatState';
import { CancelToken } from '../core/rpc';
import { Answer, PendingPermissions, REVIEW_DIFF, buildQuestion, cardQuestion } from '../core/permissions';
import { PermissionOutcome, PermissionRequestParams } from '../core/wire';
import { DiffDocuments } from './diffDocuments';

export const SHOW_IN_CHAT = 'Show in Chat';
const NOT_NOW = 'Not Now';

export interface PermissionHooks {
  /** Show the open question on the call's card, or (null) how it ended. */
  show(toolCallId: string, question: CardQuestion | null, extra: { answered?: Answer; call?: PermissionRequestParams['toolCall'] }): void;
  chatVisible(): boolean;
  /** Bring the chat into view, at the card of `toolCallId`. */
  revealChat(toolCallId?: string): Promise<void>;
  /** Also ask in a modal dialog (the user's setting). */
  wantsDialog(): boolean;
  /** The name of the workspace folder a session works in (its "always" rules go there). */
  sessionFolder(sessionId: string): string | undefined;
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
    const id = params.toolCall.toolCallId;
    const question = buildQuestion(params, (uri) => vscode.workspace.asRelativePath(vscode.Uri.parse(uri)), this.hooks.sessionFolder(params.sessionId));
    const answer = this.pending.open(id, question, params.sessionId);
    const cancel = token.onCancellationRequested(() => this.pending.withdraw(id));
    this.hooks.show(id, cardQuestion(question), { call: params.toolCall });
    if (question.kind === 'plan') void this.point(id, 'Tether has a plan ready for your review.', 'Review Plan');
    else if (this.hooks.wantsDialog()) void this.dialog(id);
    else void this.point(id, `Tether needs your approval: ${params.toolCall.title}`, SHOW_IN_CHAT);
    try {
      const { outcome, answer: answered } = await answer;
      this.hooks.show(id, null, { answered });
      return outcome;
    } catch (error) {
      this.hooks.show(id, null, {});
      throw error;
    } finally {
      cancel.dispose();
      void this.closeProposed(id);
    }
  }

  /** The modal dialog (only when the user asked for dialogs). The first button, which has
   * the focus and which Enter presses, is "Show in Chat"; Escape is "Not Now". */
  async dialog(id: string): Promise<void> {
    const question = this.pending.question(id);
    if (!question || question.kind === 'plan') return;
    const items: vscode.MessageItem[] = [
      { title: SHOW_IN_CHAT },
      ...(question.diffs.length ? [{ title: REVIEW_DIFF }] : []),
      ...question.choices.map((c) => ({ title: c.label })),
      { title: NOT_NOW, isCloseAffordance: true },
    ];
    const picked = await vscode.window.showWarningMessage(question.message, { modal: true, detail: question.detail }, ...items);
    if (picked?.title === SHOW_IN_CHAT) await this.hooks.revealChat(id);
    else if (picked?.title === REVIEW_DIFF) await this.reviewDiff(id);
    else this.pending.answerLabel(id, picked?.title);
  }

  /** Open the proposed change in the diff editor, beside the chat whose card answers it. */
  async reviewDiff(id: string): Promise<void> {
    const question = this.pending.question(id);
    if (!question) return;
    const opened: vscode.Uri[] = [];
    for (const d of question.diffs) {
      const name = vscode.workspace.asRelativePath(vscode.Uri.parse(d.uri));
      opened.push(await this.diffs.openToolDiff(d.uri, d, 'old', `${name} (proposed by Tether)`));
    }
    this.proposed.set(id, [...(this.proposed.get(id) ?? []), ...opened]);
    // Answered meanwhile (the diff took a moment): nothing left to review.
    if (!this.pending.isPending(id)) await this.closeProposed(id);
    else if (!this.hooks.chatVisible()) await this.hooks.revealChat(id);
  }

  /** A notification that points to the card, when the chat is out of sight. It answers
   * nothing itself, and never takes the focus. */
  private async point(id: string, message: string, show: string): Promise<void> {
    if (this.hooks.chatVisible()) return;
    const question = this.pending.question(id);
    const extra = question?.diffs.length ? [REVIEW_DIFF] : [];
    const picked = await vscode.window.showInformationMessage(message, show, ...extra);
    if (!this.pending.isPending(id)) return;
    if (picked === show) await this.hooks.revealChat(id);
    else if (picked === REVIEW_DIFF) await this.reviewDiff(id);
  }

  private async closeProposed(id: string): Promise<void> {
    const uris = this.proposed.get(id);
    this.proposed.delete(id);
    if (uris?.length) await this.diffs.closeDiffs(uris);
  }
}
