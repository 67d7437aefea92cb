/**
 * "Fix with Tether": the prompt for problems the editor reports (a quick fix on one
 * diagnostic, or the editor title button for every error and warning of a file). The
 * problem's lines go along as a selection, so the agent reads them from the live buffer.
 */
import { ContentBlock, Range } from './wire';

/** The fields of a `vscode.Diagnostic` the prompt needs (severity: Error=0 … Hint=3). */
export interface Problem {
  range: Range;
  message: string;
  severity: number;
  source?: string;
  code?: string | number | { value: string | number };
}

const SEVERITY = ['error', 'warning', 'info', 'hint'];

export function fixPrompt(fileUri: string, relativePath: string, problems: Problem[]): ContentBlock[] {
  if (problems.length === 0) return [];
  const lines = problems.map((p) => `- ${describe(p)}`);
  const text =
    problems.length === 1
      ? `Fix this problem in ${relativePath}: ${describe(problems[0])}`
      : `Fix these problems in ${relativePath}:\n${lines.join('\n')}`;
  const blocks: ContentBlock[] = [{ type: 'text', text }];
  if (problems.length === 1) {
    const r = problems[0].range;
    // The whole lines around the problem: the model sees it in context.
    const range: Range = { start: { line: r.start.line, character: 0 }, end: { line: r.end.line + 1, character: 0 } };
    blocks.push({ type: 'resource_link', uri: fileUri, range, name: `${relativePath}:${r.start.line + 1}` });
  } else {
    blocks.push({ type: 'resource_link', uri: fileUri, name: relativePath });
  }
  return blocks;
}

/** `line 3, error: Trailing comma (json 519)`: 1-based, as editors number lines. */
export function describe(p: Problem): string {
  const code = typeof p.code === 'object' ? p.code.value : p.code;
  const origin = [p.source, code].filter((x) => x !== undefined && x !== '').join(' ');
  return `line ${p.range.start.line + 1}, ${SEVERITY[p.severity] ?? 'problem'}: ${p.message}${origin ? ` (${origin})` : ''}`;
}

/** The problems worth fixing in a file: errors and warnings, most severe first. */
export function worthFixing(problems: Problem[]): Problem[] {
  return problems.filter((p) => p.severity <= 1).sort((a, b) => a.severity - b.severity || a.range.start.line - b.range.start.line);
}
