/**
 * A diff the daemon sends for a big file is a region: the changed lines with a few around
 * them, starting at `line` (zero-based) in both the old and the new file. With the file's
 * current text a client can put the region back into the whole file: before the edit the
 * text holds `oldText` at `line`, after it `newText`. Lines end at \n, \r\n or \r, as the
 * daemon counts them.
 */

export interface DiffLike {
  oldText?: string | null;
  newText: string;
  /** Absent: the texts are the whole file. */
  line?: number;
}

export interface WholeTexts {
  /** null: the change created the file. */
  before: string | null;
  after: string;
}

/** Offsets where each line of `text` starts (a text ending in a line break has no extra line). */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\n' || (ch === '\r' && text[i + 1] !== '\n')) starts.push(i + 1);
  }
  if (starts.length > 1 && starts[starts.length - 1] === text.length) starts.pop();
  return starts;
}

function lineCount(text: string): number {
  return text === '' ? 0 : lineStarts(text).length;
}

/** `text` with `from` (which must start at line `line`) replaced by `to`; undefined when
 * `text` does not hold `from` there. */
export function spliceRegion(text: string, line: number, from: string, to: string): string | undefined {
  const starts = lineStarts(text);
  const at = line < starts.length ? starts[line] : line === starts.length || text === '' ? text.length : -1;
  if (at < 0 || (text === '' && line > 0)) return undefined;
  if (text.slice(at, at + from.length) !== from) return undefined;
  const end = at + from.length;
  // The region holds whole lines: it must end where a line ends.
  if (end < text.length && lineCount(from) > 0 && !/[\r\n]$/.test(from)) return undefined;
  return text.slice(0, at) + to + text.slice(end);
}

/** The whole file before and after a diff, using `current` (the file's text now) for a
 * region; undefined when the region is not in `current` (the file changed since).
 * `holds` says which side `current` should be (a question comes before its edit, an
 * update after it); without it either is tried, the new side first. */
export function wholeTexts(diff: DiffLike, current: string | undefined, holds?: 'old' | 'new'): WholeTexts | undefined {
  if (diff.line === undefined) return { before: diff.oldText ?? null, after: diff.newText };
  if (current === undefined) return undefined;
  const oldText = diff.oldText ?? '';
  if (holds !== 'old') {
    const before = spliceRegion(current, diff.line, diff.newText, oldText);
    if (before !== undefined) return { before, after: current };
  }
  if (holds !== 'new') {
    const after = spliceRegion(current, diff.line, oldText, diff.newText);
    if (after !== undefined) return { before: current, after };
  }
  return undefined;
}

/** "lines 12–19" of a region diff's new side, one-based, for titles. */
export function regionLabel(diff: DiffLike): string {
  const first = (diff.line ?? 0) + 1;
  const last = Math.max(first, first + lineCount(diff.newText) - 1);
  return `lines ${first}–${last}`;
}
