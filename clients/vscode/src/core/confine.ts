/**
 * Whether a path lies inside the workspace: after `..` is resolved, and after symlinks are
 * followed (a link in the workspace that points outside it leads outside). Pure (the file
 * system's `realpath` is injected), so every case is tested.
 */
import * as path from 'path';

export interface ConfineInput {
  /** The workspace folders' paths. */
  folders: string[];
  platform: NodeJS.Platform;
  /** The file's real path with every link followed; undefined when it does not exist. */
  realpath(file: string): string | undefined;
}

export function insideWorkspace(file: string, input: ConfineInput): boolean {
  const p = input.platform === 'win32' ? path.win32 : path.posix;
  if (!p.isAbsolute(file)) return false;
  const within = (child: string, parent: string) => {
    const rel = p.relative(fold(parent, input.platform), fold(child, input.platform));
    return rel === '' || (!rel.startsWith('..') && !p.isAbsolute(rel));
  };
  const resolved = p.resolve(file);
  const folder = input.folders.map((f) => p.resolve(f)).find((f) => within(resolved, f));
  if (folder === undefined) return false;
  // Links: both sides as the file system has them. A file that does not exist (yet) is
  // judged by its path, but a link on the way to it still counts.
  const real = input.realpath(resolved) ?? realParent(resolved, input, p);
  if (real === undefined) return false;
  return input.folders.some((f) => within(real, input.realpath(p.resolve(f)) ?? p.resolve(f)));
}

/** The real path of the nearest existing ancestor, with the rest appended. */
function realParent(file: string, input: ConfineInput, p: typeof path.posix): string | undefined {
  let dir = file;
  const rest: string[] = [];
  for (;;) {
    const parent = p.dirname(dir);
    if (parent === dir) return undefined;
    rest.unshift(p.basename(dir));
    dir = parent;
    const real = input.realpath(dir);
    if (real !== undefined) return p.join(real, ...rest);
  }
}

/** Windows paths compare without regard to case. */
function fold(file: string, platform: NodeJS.Platform): string {
  return platform === 'win32' ? file.toLowerCase() : file;
}
