/**
 * A `tether/requestPermission` → the question the user sees, and their answer → the outcome.
 */
import { PermissionOptionKind, PermissionOutcome, PermissionRequestParams } from './wire';
import { diffStat } from './format';

export const REVIEW_DIFF = 'Review diff';

export interface PermissionChoice {
  label: string;
  optionId: string;
  kind: PermissionOptionKind;
}

export interface PermissionQuestion {
  message: string;
  detail: string;
  choices: PermissionChoice[];
  /** The proposed change, when the tool would edit a file: enables "Review diff". */
  diffs: { uri: string; oldText: string | null; newText: string }[];
}

// Allow first (the common answer, and Enter picks the first button), reject last.
const ORDER: PermissionOptionKind[] = ['allow_once', 'allow_always', 'reject_once', 'reject_always'];

export function buildQuestion(params: PermissionRequestParams, relative: (uri: string) => string = (u) => u): PermissionQuestion {
  const call = params.toolCall;
  const diffs = (call.content ?? [])
    .filter((c): c is Extract<typeof c, { type: 'diff' }> => c.type === 'diff')
    .map((c) => ({ uri: c.uri, oldText: c.oldText ?? null, newText: c.newText }));
  const lines: string[] = [];
  const command = call.rawInput.command;
  if (typeof command === 'string') lines.push(`$ ${command}`);
  for (const d of diffs) {
    const stat = diffStat(d.oldText, d.newText);
    const verb = d.oldText === null ? 'create' : 'change';
    lines.push(`${verb} ${relative(d.uri)} (+${stat.added} −${stat.removed})`);
  }
  if (!lines.length) {
    for (const c of call.content ?? []) if (c.type === 'text') lines.push(c.text);
  }
  const choices = [...params.options]
    .sort((a, b) => ORDER.indexOf(a.kind) - ORDER.indexOf(b.kind))
    .map((o) => ({ label: o.name, optionId: o.optionId, kind: o.kind }));
  return { message: `Tether wants to: ${call.title}`, detail: lines.join('\n'), choices, diffs };
}

/** The user's pick (a choice label, or undefined when the dialog was dismissed). */
export function outcomeFor(question: PermissionQuestion, picked: string | undefined): PermissionOutcome {
  const choice = question.choices.find((c) => c.label === picked);
  return choice ? { outcome: { outcome: 'selected', optionId: choice.optionId } } : { outcome: { outcome: 'cancelled' } };
}

/** Pick by kind (tests, and auto-answers). */
export function outcomeOfKind(params: PermissionRequestParams, kind: PermissionOptionKind): PermissionOutcome {
  const option = params.options.find((o) => o.kind === kind);
  return option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : { outcome: { outcome: 'cancelled' } };
}

/**
 * Permission questions waiting for an answer, by tool call. The modal, its follow-up
 * notification and the chat card can each answer; the first answer wins and the rest are
 * ignored, so a question is answered exactly once.
 */
export class PendingPermissions {
  private readonly pending = new Map<
    string,
    { question: PermissionQuestion; sessionId?: string; resolve: (o: PermissionOutcome) => void }
  >();

  open(toolCallId: string, question: PermissionQuestion, sessionId?: string): Promise<PermissionOutcome> {
    this.answer(toolCallId, undefined); // a repeated question supersedes the old one
    return new Promise((resolve) => this.pending.set(toolCallId, { question, sessionId, resolve }));
  }

  /** Answer with a choice label (undefined: dismissed). False if nothing was waiting. */
  answer(toolCallId: string, label: string | undefined): boolean {
    const entry = this.pending.get(toolCallId);
    if (!entry) return false;
    this.pending.delete(toolCallId);
    entry.resolve(outcomeFor(entry.question, label));
    return true;
  }

  answerById(toolCallId: string, optionId: string): boolean {
    const choice = this.pending.get(toolCallId)?.question.choices.find((c) => c.optionId === optionId);
    return choice ? this.answer(toolCallId, choice.label) : false;
  }

  isPending(toolCallId: string): boolean {
    return this.pending.has(toolCallId);
  }

  /** A turn of `sessionId` ended (e.g. it was stopped): its questions are moot. The daemon
   * does not withdraw them, and VS Code cannot close a modal, so a late click is ignored. */
  cancelSession(sessionId: string): void {
    for (const [id, entry] of [...this.pending]) if (entry.sessionId === sessionId) this.answer(id, undefined);
  }

  /** The daemon went away: nobody is waiting for these answers any more. */
  cancelAll(): void {
    for (const id of [...this.pending.keys()]) this.answer(id, undefined);
  }
}
