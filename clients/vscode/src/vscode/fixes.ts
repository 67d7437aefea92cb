/**
 * "Fix with Tether": a quick fix on every diagnostic of a file, and a button in the editor
 * title that hands all of the file's errors and warnings to the agent (or, in a file with
 * none, adds the file to the prompt).
 */
import * as vscode from 'vscode';
import { Problem, fixPrompt, worthFixing } from '../core/fix';
import { truncate } from '../core/format';
import { ContentBlock } from '../core/wire';

export interface FixDeps {
  /** Run a turn for this prompt in the session of the file's workspace folder (or keep it
   * in the prompt box while Tether is not ready). */
  ask(prompt: ContentBlock[], file: vscode.Uri): Promise<void>;
  /** Put the file into the prompt box as an attachment. */
  attachFile(uri: vscode.Uri): Promise<void>;
}

export const FIX_TITLE = 'Fix with Tether';

/** Offers "Fix with Tether" on every diagnostic. Registered when the extension activates (a
 * file is opened), before Tether is used: it starts nothing, only the chosen fix does. */
export class FixProvider implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.QuickFix];

  provideCodeActions(document: vscode.TextDocument, _range: vscode.Range, context: vscode.CodeActionContext): vscode.CodeAction[] {
    const several = context.diagnostics.length > 1;
    return context.diagnostics.map((diagnostic) => {
      const title = several ? `${FIX_TITLE}: ${truncate(diagnostic.message, 50)}` : FIX_TITLE;
      const action = new vscode.CodeAction(title, vscode.CodeActionKind.QuickFix);
      action.diagnostics = [diagnostic];
      action.command = { command: 'tether.fix', title, arguments: [document.uri, diagnostic] };
      return action;
    });
  }
}

export function registerFixProvider(): vscode.Disposable {
  return vscode.languages.registerCodeActionsProvider({ scheme: 'file' }, new FixProvider(), { providedCodeActionKinds: FixProvider.kinds });
}

/** `tether.fix` (a quick fix's command) and `tether.fixFile` (the editor title button). */
export function fixCommands(deps: FixDeps): Record<'tether.fix' | 'tether.fixFile', (...args: unknown[]) => Promise<void>> {
  return {
    'tether.fix': async (uri?: unknown, diagnostic?: unknown) => {
      if (!(uri instanceof vscode.Uri) || !diagnostic) return fixFile(deps);
      await deps.ask(fixPrompt(uri.toString(), vscode.workspace.asRelativePath(uri), [problem(diagnostic as vscode.Diagnostic)]), uri);
    },
    'tether.fixFile': (uri?: unknown) => fixFile(deps, uri instanceof vscode.Uri ? uri : undefined),
  };
}

async function fixFile(deps: FixDeps, target?: vscode.Uri): Promise<void> {
  const uri = target ?? vscode.window.activeTextEditor?.document.uri;
  if (!uri || uri.scheme !== 'file') {
    void vscode.window.showInformationMessage('Tether: open a file to fix its problems.');
    return;
  }
  const problems = worthFixing(vscode.languages.getDiagnostics(uri).map(problem));
  if (problems.length === 0) {
    // Nothing reported: the user still wants help with this file.
    await deps.attachFile(uri);
    return;
  }
  await deps.ask(fixPrompt(uri.toString(), vscode.workspace.asRelativePath(uri), problems), uri);
}

function problem(d: vscode.Diagnostic): Problem {
  return {
    range: { start: { line: d.range.start.line, character: d.range.start.character }, end: { line: d.range.end.line, character: d.range.end.character } },
    message: d.message,
    severity: d.severity,
    source: d.source,
    code: d.code === undefined ? undefined : typeof d.code === 'object' ? { value: d.code.value } : d.code,
  };
}
