/**
 * A `tether/requestPermission` → the question the user sees, and their answer → the outcome.
 *
 * A question stays open until it is answered or the daemon withdraws it (`$/cancelRequest`,
 * the turn ended, the daemon went away). The chat card is the question; closing a dialog or
 * a notification about it is not an answer.
 */
import { CardQuestion } from './chatTypes';
import { diffStat } from './format';
import { describeRule } from './rules';
import { PermissionKind, PermissionOptionKind, PermissionOutcome, PermissionRequestParams } from './wire';

export const REVIEW_DIFF = 'Review diff';

export interface PermissionChoice {
  label: string;
  optionId: string;
  kind: PermissionOptionKind;
  /** The permission rule an "always" answer saves, shown before it is saved. */
  rule?: string;
  /** What the rule covers, in words ("editing calc/ops.py in the folder ws"). */
  meaning?: string;
}

export interface PermissionQuestion {
  kind: PermissionKind;
  message: string;
  detail: string;
  choices: PermissionChoice[];
  /** The proposed change, when the tool would edit a file: enables "Review diff". */
  diffs: { uri: string; oldText: string | null; newText: string; line?: number }[];
  /** A plan approval: the plan, in Markdown. */
  plan?: string;
}

/** What the user answered: the choice and, for plans, their feedback. */
export interface Answer {
  label: string;
  optionId: string;
  feedback?: string;
}

// Allow first (the common answer), reject last. (A dialog, when the user wants one, puts a
// harmless button before them: the first button is the one Enter presses.)
const ORDER: PermissionOptionKind[] = ['allow_once', 'allow_always', 'reject_once', 'reject_always'];

/** `relative`: a file's name as the user knows it; `folder`: the name of the workspace folder
 * whose settings an "always" answer writes (for what its rule means). */
export function buildQuestion(params: PermissionRequestParams, relative: (uri: string) => string = (u) => u, folder?: string): PermissionQuestion {
  const call = params.toolCall;
  if (params.kind === 'plan') {
    const plan = params.plan ?? (typeof call.rawInput.plan === 'string' ? call.rawInput.plan : '');
    // A plan's answers come in the daemon's order: start one way, start the other, keep planning.
    const choices = params.options.map((o) => ({ label: o.name, optionId: o.optionId, kind: o.kind }));
    return { kind: 'plan', message: 'Tether has a plan. Start on it?', detail: plan, choices, diffs: [], plan };
  }
  const diffs = (call.content ?? [])
    .filter((c): c is Extract<typeof c, { type: 'diff' }> => c.type === 'diff')
    .map((c) => ({ uri: c.uri, oldText: c.oldText ?? null, newText: c.newText, ...(c.line === undefined ? {} : { line: c.line }) }));
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
    .map((o) => ({ label: labelOf(o.name, o.rule), optionId: o.optionId, kind: o.kind, ...(o.rule ? { rule: o.rule, meaning: describeRule(o.rule, folder) } : {}) }));
  return { kind: 'tool', message: `Tether wants to: ${call.title}`, detail: lines.join('\n'), choices, diffs };
}

/** The rule is part of the answer's name; an older daemon's name may lack it. */
function labelOf(name: string, rule: string | undefined): string {
  return rule && !name.includes(rule) ? `${name} ${rule}` : name;
}

/** The question as the chat card shows it (plain JSON: it travels to the webview). */
export function cardQuestion(question: PermissionQuestion, sessionId: string): CardQuestion {
  return {
    kind: question.kind,
    sessionId,
    choices: question.choices.map((c) => ({ label: c.label, optionId: c.optionId, kind: c.kind, ...(c.rule ? { rule: c.rule, meaning: c.meaning } : {}) })),
    ...(question.plan !== undefined ? { plan: question.plan } : {}),
    hasDiff: question.diffs.length > 0,
  };
}

/** Pick by kind (tests, and auto-answers). */
export function outcomeOfKind(params: PermissionRequestParams, kind: PermissionOptionKind): PermissionOutcome {
  const option = params.options.find((o) => o.kind === kind);
  return option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : { outcome: { outcome: 'cancelled' } };
}

export const WITHDRAWN: PermissionOutcome = { outcome: { outcome: 'cancelled' } };

/** Which question: tool call ids are unique within a session only (two sessions may each
 * have a `toolu_1_0`), so a question is named by both. */
export interface QuestionKey {
  sessionId: string;
  toolCallId: string;
}

/** An open question: its key, what it asks and the call it is about (for a card not yet shown). */
export interface OpenQuestion {
  key: QuestionKey;
  question: PermissionQuestion;
  call?: PermissionRequestParams['toolCall'];
}

interface Entry extends OpenQuestion {
  resolve(outcome: PermissionOutcome, answer?: Answer): void;
}

function keyOf(key: QuestionKey): string {
  return JSON.stringify([key.sessionId, key.toolCallId]);
}

/**
 * Permission questions waiting for an answer, by session and tool call. The modal, its
 * follow-up notification and the chat card can each answer; the first answer wins and the
 * rest are ignored, so a question is answered exactly once. Nothing here answers on the
 * user's behalf: only the daemon's side (a cancelled request, an ended turn) withdraws a
 * question, and only its own session's.
 */
export class PendingPermissions {
  private readonly pending = new Map<string, Entry>();

  /** Resolves with the outcome to send, and what the user picked (none when withdrawn). */
  open(key: QuestionKey, question: PermissionQuestion, call?: PermissionRequestParams['toolCall']): Promise<{ outcome: PermissionOutcome; answer?: Answer }> {
    this.withdraw(key); // a repeated question supersedes the old one
    return new Promise((resolve) =>
      this.pending.set(keyOf(key), { key: { ...key }, question, call, resolve: (outcome, answer) => resolve({ outcome, answer }) }),
    );
  }

  /** Answer with an option (and feedback). False if nothing was waiting or no such option. */
  answer(key: QuestionKey, optionId: string, feedback?: string): boolean {
    const entry = this.pending.get(keyOf(key));
    const choice = entry?.question.choices.find((c) => c.optionId === optionId);
    if (!entry || !choice) return false;
    this.pending.delete(keyOf(key));
    const text = feedback?.trim() || undefined;
    const outcome: PermissionOutcome = { outcome: { outcome: 'selected', optionId, ...(text ? { feedback: text } : {}) } };
    entry.resolve(outcome, { label: choice.label, optionId, ...(text ? { feedback: text } : {}) });
    return true;
  }

  /** Answer with the label a dialog button showed; undefined (dismissed) answers nothing. */
  answerLabel(key: QuestionKey, label: string | undefined): boolean {
    const choice = this.pending.get(keyOf(key))?.question.choices.find((c) => c.label === label);
    return choice ? this.answer(key, choice.optionId) : false;
  }

  isPending(key: QuestionKey): boolean {
    return this.pending.has(keyOf(key));
  }

  question(key: QuestionKey): PermissionQuestion | undefined {
    return this.pending.get(keyOf(key))?.question;
  }

  /** The open questions of `sessionId` (all sessions' when absent), oldest first. */
  list(sessionId?: string): OpenQuestion[] {
    return [...this.pending.values()]
      .filter((e) => sessionId === undefined || e.key.sessionId === sessionId)
      .map(({ key, question, call }) => ({ key, question, ...(call ? { call } : {}) }));
  }

  /** The daemon no longer waits for this answer. */
  withdraw(key: QuestionKey): void {
    const entry = this.pending.get(keyOf(key));
    if (!entry) return;
    this.pending.delete(keyOf(key));
    entry.resolve(WITHDRAWN);
  }

  /** A turn of `sessionId` ended (e.g. it was stopped): its questions are moot. */
  withdrawSession(sessionId: string): void {
    for (const entry of [...this.pending.values()]) if (entry.key.sessionId === sessionId) this.withdraw(entry.key);
  }

  /** The daemon went away: nobody is waiting for these answers any more. */
  withdrawAll(): void {
    for (const entry of [...this.pending.values()]) this.withdraw(entry.key);
  }
}
