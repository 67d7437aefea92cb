/**
 * Editor diagnostics → `tether/diagnostics`. Only files the agent touched are forwarded:
 * the daemon wants to know about errors its edits caused, not every lint in the workspace.
 * A file's first report is sent the moment it becomes touched, before the edit lands: the
 * daemon takes it as the baseline, so errors that were already there are not blamed on it.
 */
import { uriKey } from './uri';
import { DiagnosticsParams, Range, WireDiagnostic } from './wire';

/** The fields of `vscode.Diagnostic` we read (severity: Error=0 … Hint=3). */
export interface EditorDiagnostic {
  range: Range;
  severity: number;
  message: string;
  source?: string;
  code?: string | number | { value: string | number };
}

export function toWire(d: EditorDiagnostic): WireDiagnostic {
  const out: WireDiagnostic = {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    severity: Math.min(4, Math.max(1, d.severity + 1)) as 1 | 2 | 3 | 4,
    message: d.message,
  };
  if (d.source) out.source = d.source;
  if (d.code !== undefined) out.code = typeof d.code === 'object' ? d.code.value : d.code;
  return out;
}

/** The notifications to send for a diagnostics change event (`touched` holds `uriKey`s). */
export function diagnosticsToForward(
  changed: string[],
  touched: ReadonlySet<string>,
  get: (uri: string) => EditorDiagnostic[],
): DiagnosticsParams[] {
  return changed.filter((uri) => touched.has(uriKey(uri))).map((uri) => ({ uri, diagnostics: get(uri).map(toWire) }));
}

/** The baseline report of a file that just became touched. */
export function baselineFor(uri: string, get: (uri: string) => EditorDiagnostic[]): DiagnosticsParams {
  return { uri, diagnostics: get(uri).map(toWire) };
}
