/**
 * What a permission rule means, in words, for the "Always" answers: the rule is shown as it
 * will be saved (`Edit(/calc/ops.py)`), and beside it what it covers, because the saved
 * form reads like something else (a leading `/` is the workspace folder, not the file
 * system's root). The syntax is Claude Code's, as the daemon writes it
 * (`permissions/policy.py`: `Tool`, `Tool(/relative)`, `Tool(//absolute)`, `Bash(prefix:*)`,
 * `Bash(exact command)`, `WebFetch(domain:host)`, `mcp__server__tool`).
 */

/** Where the daemon saves "always" rules, relative to the session's workspace folder. */
export const RULES_FILE = '.tether/settings.local.json';

const FILE_VERBS: Record<string, string> = {
  Edit: 'editing',
  Write: 'writing',
  Read: 'reading',
  NotebookEdit: 'editing the notebook',
  MultiEdit: 'editing',
};

/** `rule` in words, e.g. "editing calc/ops.py in ws". `folder`: the workspace folder's name. */
export function describeRule(rule: string, folder?: string): string {
  const mcp = /^mcp__([^_]+(?:_[^_]+)*?)(?:__(.+))?$/.exec(rule);
  if (mcp) return mcp[2] ? `the tool ${mcp[2]} of the MCP server ${mcp[1]}` : `every tool of the MCP server ${mcp[1]}`;
  const call = /^([A-Za-z][\w-]*)\((.*)\)$/s.exec(rule);
  if (!call) return `every ${rule} call`;
  const [, tool, content] = call;
  if (tool === 'Bash') {
    if (content.endsWith(':*')) return `commands that start with ${content.slice(0, -2)}`;
    return `the command ${content}, exactly`;
  }
  if (tool === 'WebFetch' && content.startsWith('domain:')) return `fetching from ${content.slice('domain:'.length)}`;
  const verb = FILE_VERBS[tool];
  if (verb) return `${verb} ${place(content, folder)}`;
  return `${tool} with ${content}`;
}

/** A path pattern of a rule, said as what it names. */
function place(pattern: string, folder?: string): string {
  const glob = /[*?[]/.test(pattern);
  const what = (p: string) => (glob ? `files matching ${p}` : p);
  if (pattern.startsWith('//')) return what(pattern.slice(1));
  if (pattern.startsWith('~/')) return `${what(pattern)} in your home folder`;
  if (pattern.startsWith('/')) return `${what(pattern.slice(1))} in ${folder ? `the folder ${folder}` : 'this workspace folder'}`;
  return what(pattern);
}
