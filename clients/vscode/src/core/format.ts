/** Small formatting helpers shared by the chat view, the status bar and the changes view. */
import { UsageView } from './chatState';

export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function formatCost(usd: number | undefined): string {
  if (usd === undefined) return '';
  if (usd === 0) return '$0.00';
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(2)}`;
}

export interface Meter {
  /** 0..1 share of the context window in use, or null when unknown. */
  fraction: number | null;
  label: string;
  /** Longer text for the tooltip and screen readers. */
  detail: string;
}

export function contextMeter(u: UsageView): Meter {
  const cost = u.sessionCostUsd !== undefined || u.turnCostUsd !== undefined
    ? (u.sessionCostUsd ?? 0) + (u.turnCostUsd ?? 0)
    : undefined;
  const costText = formatCost(cost);
  if (!u.contextWindow) {
    return { fraction: null, label: costText, detail: costText ? `Cost so far ${costText}` : 'No usage yet' };
  }
  const fraction = Math.min(1, u.contextTokens / u.contextWindow);
  const pct = Math.round(fraction * 100);
  const label = `${formatTokens(u.contextTokens)} / ${formatTokens(u.contextWindow)} (${pct}%)` + (costText ? ` · ${costText}` : '');
  const detail =
    `Context ${formatTokens(u.contextTokens)} of ${formatTokens(u.contextWindow)} tokens (${pct}%)` +
    (costText ? `, cost so far ${costText}` : '');
  return { fraction, label, detail };
}

/** Lines added and removed between two texts: the middle that differs after trimming the
 * common head and tail. Cheap, and right for the single-hunk edits agents mostly make. */
export function diffStat(before: string | null, after: string): { added: number; removed: number } {
  const a = before === null || before === '' ? [] : before.split('\n');
  const b = after === '' ? [] : after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return { added: b.length - head - tail, removed: a.length - head - tail };
}

export interface StatusInput {
  busy: boolean;
  currentTool: string | null;
  /** Title of a tool call waiting for the user's permission. */
  awaiting?: string | null;
}

export function statusText(state: StatusInput, connected: boolean): string {
  if (!connected) return '$(debug-disconnect) Tether';
  if (state.awaiting) return `$(shield) Tether: approve ${truncate(state.awaiting, 36)}?`;
  if (!state.busy) return '$(hubot) Tether';
  return state.currentTool ? `$(loading~spin) Tether: ${truncate(state.currentTool, 40)}` : '$(loading~spin) Tether: thinking';
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function basename(uri: string): string {
  const path = uri.replace(/[?#].*$/, '');
  return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
}
