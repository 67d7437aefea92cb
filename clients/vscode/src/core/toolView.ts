/** What a tool card shows, derived from its state: pure, so it is unit-tested. */
import { ToolCard } from './chatState';
import { basename, diffStat } from './format';
import { Rejection, ToolStatus } from './wire';

export type CardStatus = ToolStatus | 'awaiting' | 'rejected';

export interface ToolCardView {
  status: CardStatus;
  statusLabel: string;
  /** Codicon name for the status. */
  icon: string;
  title: string;
  /** One line that says what the call did ("Read 15 lines"), shown under the title. */
  summary?: string;
  /** Bash: the command line. */
  command?: string;
  /** Bash: output so far, and the exit code once known. */
  output?: string;
  exitCode?: number | null;
  diffs: { uri: string; name: string; added: number; removed: number }[];
  text?: string;
  /** A plan (ExitPlanMode): Markdown shown in full, with how it was answered. */
  plan?: string;
  /** Saving the edit also saved the user's unsaved changes to these files (names). */
  savedUserEdits?: string[];
  /** Whether the card starts open. */
  expanded: boolean;
}

const STATUS: Record<Exclude<CardStatus, 'rejected'>, { label: string; icon: string }> = {
  pending: { label: 'Pending', icon: 'circle-outline' },
  awaiting: { label: 'Needs approval', icon: 'shield' },
  in_progress: { label: 'Running', icon: 'loading' },
  completed: { label: 'Done', icon: 'check' },
  failed: { label: 'Failed', icon: 'error' },
};

const REJECTED: Record<Rejection, string> = {
  user: 'Rejected by you',
  rule: 'Denied by a permission rule',
  hook: 'Blocked by a hook',
  mode: 'Not allowed in this mode',
};

/** A plan's card speaks of the plan, not of a tool call. */
const PLAN_STATUS: Partial<Record<CardStatus, string>> = {
  awaiting: 'Waiting for your answer',
  completed: 'Approved',
  rejected: 'Kept planning',
};

const MAX_TEXT = 4000;

export function toolCardView(card: ToolCard): ToolCardView {
  const finished = card.status === 'completed' || card.status === 'failed';
  const status: CardStatus = card.question && !finished ? 'awaiting' : card.rejected && card.status === 'failed' ? 'rejected' : card.status;
  const command = card.toolKind === 'execute' && typeof card.rawInput.command === 'string' ? card.rawInput.command : undefined;
  let output: string | undefined;
  let exitCode: number | null | undefined;
  const diffs: ToolCardView['diffs'] = [];
  const texts: string[] = [];
  for (const content of card.content) {
    if (content.type === 'terminal') {
      output = content.output;
      exitCode = content.exitCode;
    } else if (content.type === 'diff') {
      diffs.push({ uri: content.uri, name: basename(content.uri), ...diffStat(content.oldText ?? null, content.newText) });
    } else {
      texts.push(content.text);
    }
  }
  const plan = planOf(card, texts);
  let text = plan === undefined ? texts.join('\n') : '';
  let summary = summaryOf(card, status, text, output, exitCode);
  // Read results are the file itself: the editor shows it better; the card says how much.
  if (card.toolKind === 'read' && card.status === 'completed') text = '';
  // A todo update's list is the Plan panel above the chat.
  if (isTodo(card) && card.status === 'completed') text = '';
  if (text.length > MAX_TEXT) text = `${text.slice(0, MAX_TEXT)}\n… (${text.length - MAX_TEXT} more characters)`;
  if (plan !== undefined) summary = undefined; // the answer and its feedback are under the plan
  else if (status === 'rejected' && !summary && card.answered) summary = `You answered: ${card.answered.label}`;
  const statusLabel = plan !== undefined && PLAN_STATUS[status] ? PLAN_STATUS[status]! : status === 'rejected' ? REJECTED[card.rejected ?? 'user'] : STATUS[status].label;
  const icon = status === 'rejected' ? 'circle-slash' : STATUS[status].icon;
  return {
    status,
    statusLabel,
    icon,
    title: card.title,
    summary,
    command,
    output,
    exitCode,
    diffs,
    text: text || undefined,
    plan,
    ...(card.savedUserEdits?.length ? { savedUserEdits: card.savedUserEdits.map(basename) } : {}),
    // Open what deserves a look: a question, a plan, a failure, a running command, an edit.
    expanded:
      status === 'awaiting' ||
      plan !== undefined ||
      status === 'failed' ||
      (command !== undefined && status === 'in_progress') ||
      (diffs.length > 0 && status !== 'rejected') ||
      Boolean(card.savedUserEdits?.length),
  };
}

function isTodo(card: ToolCard): boolean {
  return card.toolKind === 'think' && Array.isArray(card.rawInput.todos);
}

/** ExitPlanMode carries its plan in its input; its final content repeats it as text. */
function planOf(card: ToolCard, texts: string[]): string | undefined {
  if (card.question?.kind === 'plan' && card.question.plan) return card.question.plan;
  if (typeof card.rawInput.plan === 'string') return card.rawInput.plan;
  return card.question?.kind === 'plan' ? texts.join('\n') : undefined;
}

function summaryOf(card: ToolCard, status: CardStatus, text: string, output: string | undefined, exitCode: number | null | undefined): string | undefined {
  if (card.toolKind === 'read' && card.status === 'completed' && status !== 'rejected') {
    const lines = text ? numberedLines(text) : 0;
    if (card.rawOutput && typeof card.rawOutput === 'object' && (card.rawOutput as { type?: unknown }).type === 'image') return 'Read an image';
    return lines === 1 ? 'Read 1 line' : `Read ${lines} lines`;
  }
  if (isTodo(card)) {
    const todos = card.rawInput.todos as { status?: unknown }[];
    const done = todos.filter((t) => t && t.status === 'completed').length;
    return `${todos.length} task${todos.length === 1 ? '' : 's'}, ${done} done`;
  }
  if (output !== undefined && exitCode !== undefined && exitCode !== null) {
    const lines = output ? output.replace(/\n$/, '').split('\n').length : 0;
    return `exit code ${exitCode} · ${lines} line${lines === 1 ? '' : 's'} of output`;
  }
  if (card.answered?.feedback) return `Your feedback: ${card.answered.feedback}`;
  return undefined;
}

/** Lines of a Read result (`cat -n` style: a line number, a tab, the text). */
function numberedLines(text: string): number {
  const lines = text.replace(/\n$/, '').split('\n');
  const numbered = lines.filter((l) => /^\s*\d+[\t→]/.test(l)).length;
  return numbered || lines.length;
}
