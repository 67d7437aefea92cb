/**
 * Permission questions as VS Code dialogs. A tool question opens a modal (it cannot be
 * missed); "Review diff" opens the diff editor and asks again in a notification, so the user
 * can read the diff while deciding. A plan goes to its card in the chat (rendered Markdown,
 * a feedback box), with a notification only when the chat is out of sight.
 *
 * Closing a dialog (Escape, the notification's ×) answers nothing: the question stays on
 * the chat card, which can answer it, review the diff, or bring the dialog back.
 */
import * as vscode from 'vscode';
import { CardQuestion } from '../core/chatState';
import { CancelToken } from '../core/rpc';
import { Answer, PendingPermissions, REVIEW_DIFF, buildQuestion, cardQuestion } from '../core/permissions';
import { PermissionOutcome, PermissionRequestParams } from '../core/wire';
import { DiffDocuments } from './diffDocuments';

export interface PermissionHooks {
  /** Show the open question on the call's card, or (null) how it ended. */
  show(toolCallId: string, question: CardQuestion | null, extra: { answered?: Answer; call?: PermissionRequestParams['toolCall'] }): void;
  chatVisible(): boolean;
  revealChat(): Promise<void>;
}

export class PermissionDialog {
  readonly pending = new PendingPermissions();

  constructor(
    private readonly diffs: DiffDocuments,
    private readonly hooks: PermissionHooks,
  ) {}

  async ask(params: PermissionRequestParams, token: CancelToken): Promise<PermissionOutcome> {
    const id = params.toolCall.toolCallId;
    const question = buildQuestion(params, (uri) => vscode.workspace.asRelativePath(vscode.Uri.parse(uri)));
    const answer = this.pending.open(id, question, params.sessionId);
    const cancel = token.onCancellationRequested(() => this.pending.withdraw(id));
    this.hooks.show(id, cardQuestion(question), { call: params.toolCall });
    void (question.kind === 'plan' ? this.announcePlan(id) : this.converse(id));
    try {
      const { outcome, answer: answered } = await answer;
      this.hooks.show(id, null, { answered });
      return outcome;
    } catch (error) {
      this.hooks.show(id, null, {});
      throw error;
    } finally {
      cancel.dispose();
    }
  }

  /** The modal for an open question (again, when the card asks for it). */
  async converse(id: string): Promise<void> {
    const question = this.pending.question(id);
    if (!question || question.kind === 'plan') return;
    const labels = question.choices.map((c) => c.label);
    const extra = question.diffs.length ? [REVIEW_DIFF] : [];
    const picked = await vscode.window.showWarningMessage(question.message, { modal: true, detail: question.detail }, ...labels, ...extra);
    if (picked === REVIEW_DIFF) await this.reviewDiff(id, true);
    else this.pending.answerLabel(id, picked);
  }

  /** Open the proposed change in the diff editor; `askAgain` follows up in a notification
   * (from the modal, which closed to show the diff). The card stays answerable. */
  async reviewDiff(id: string, askAgain: boolean): Promise<void> {
    const question = this.pending.question(id);
    if (!question) return;
    for (const d of question.diffs) {
      const name = vscode.workspace.asRelativePath(vscode.Uri.parse(d.uri));
      await this.diffs.openToolDiff(d.uri, d, 'old', `${name} (proposed by Tether)`);
    }
    if (!askAgain || !this.pending.isPending(id)) return;
    const labels = question.choices.map((c) => c.label);
    const again = await vscode.window.showWarningMessage(`${question.message} — see the proposed change in the diff editor.`, ...labels);
    this.pending.answerLabel(id, again);
  }

  private async announcePlan(id: string): Promise<void> {
    if (this.hooks.chatVisible()) return;
    const open = 'Review Plan';
    const picked = await vscode.window.showInformationMessage('Tether has a plan ready for your review.', open);
    if (picked === open && this.pending.isPending(id)) await this.hooks.revealChat();
  }
}
