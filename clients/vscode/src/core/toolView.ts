/** What a tool card shows, derived from its state: pure, so it is unit-tested. */
import { ToolCard } from './chatState';
import { basename, diffStat } from './format';
import { ToolStatus } from './wire';

export interface ToolCardView {
  status: ToolStatus | 'awaiting';
  statusLabel: string;
  /** Codicon name for the status. */
  icon: string;
  title: string;
  /** Bash: the command line. */
  command?: string;
  /** Bash: output so far, and the exit code once known. */
  output?: string;
  exitCode?: number | null;
  diffs: { uri: string; name: string; added: number; removed: number }[];
  text?: string;
  /** Whether the card starts open. */
  expanded: boolean;
}

const STATUS: Record<ToolCardView['status'], { label: string; icon: string }> = {
  pending: { label: 'Pending', icon: 'circle-outline' },
  awaiting: { label: 'Needs approval', icon: 'shield' },
  in_progress: { label: 'Running', icon: 'loading' },
  completed: { label: 'Done', icon: 'check' },
  failed: { label: 'Failed', icon: 'error' },
};

const MAX_TEXT = 4000;

export function toolCardView(card: ToolCard): ToolCardView {
  const status = card.awaitingPermission && card.status !== 'completed' && card.status !== 'failed' ? 'awaiting' : card.status;
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
  let text = texts.join('\n');
  // Read results are the file itself: the editor already shows it better.
  if (card.toolKind === 'read' && card.status === 'completed') text = '';
  if (text.length > MAX_TEXT) text = `${text.slice(0, MAX_TEXT)}\n… (${text.length - MAX_TEXT} more characters)`;
  return {
    status,
    statusLabel: STATUS[status].label,
    icon: STATUS[status].icon,
    title: card.title,
    command,
    output,
    exitCode,
    diffs,
    text: text || undefined,
    // Open what deserves a look: a question, a failure, a running command, a finished edit.
    expanded: status === 'awaiting' || status === 'failed' || (command !== undefined && status === 'in_progress') || diffs.length > 0,
  };
}
