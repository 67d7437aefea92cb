/**
 * Permission questions as VS Code dialogs. The first ask is a modal (it cannot be missed);
 * "Review diff" opens the diff editor and re-asks in a notification, so the user can read
 * the diff while deciding. The chat card offers the same answers; the first one wins.
 */
import * as vscode from 'vscode';
import { CancelToken } from '../core/rpc';
import { PendingPermissions, PermissionQuestion, REVIEW_DIFF, buildQuestion } from '../core/permissions';
import { PermissionOutcome, PermissionRequestParams } from '../core/wire';
import { DiffDocuments } from './diffDocuments';

export interface PermissionHooks {
  awaiting(toolCallId: string, awaiting: boolean, choices?: { label: string; optionId: string }[]): void;
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
    const cancel = token.onCancellationRequested(() => this.pending.answer(id, undefined));
    this.hooks.awaiting(id, true, question.choices.map((c) => ({ label: c.label, optionId: c.optionId })));
    void this.converse(id, question);
    try {
      return await answer;
    } finally {
      cancel.dispose();
      this.hooks.awaiting(id, false);
    }
  }

  private async converse(id: string, question: PermissionQuestion): Promise<void> {
    const labels = question.choices.map((c) => c.label);
    const extra = question.diffs.length ? [REVIEW_DIFF] : [];
    const picked = await vscode.window.showWarningMessage(
      question.message,
      { modal: true, detail: question.detail },
      ...labels,
      ...extra,
    );
    if (!this.pending.isPending(id)) return;
    if (picked !== REVIEW_DIFF) {
      this.pending.answer(id, picked);
      return;
    }
    for (const d of question.diffs) {
      await this.diffs.openDiff(d.uri, d.oldText, d.newText, `${vscode.workspace.asRelativePath(vscode.Uri.parse(d.uri))} (proposed by Tether)`);
    }
    const again = await vscode.window.showWarningMessage(`${question.message} — see the proposed change in the diff editor.`, ...labels);
    if (this.pending.isPending(id)) this.pending.answer(id, again);
  }
}
