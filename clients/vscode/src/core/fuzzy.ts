/** Ranking workspace paths for the `@file` picker: a subsequence match, best first. */

/** Score of `query` against `path` (higher is better), or null when it does not match. */
export function score(path: string, query: string): number | null {
  if (!query) return 0;
  const p = path.toLowerCase();
  const q = query.toLowerCase();
  const name = p.slice(p.lastIndexOf('/') + 1);
  if (name.startsWith(q)) return 1000 - path.length;
  if (name.includes(q)) return 800 - path.length;
  if (p.includes(q)) return 600 - path.length;
  let at = 0;
  let gaps = 0;
  for (const ch of q) {
    const found = p.indexOf(ch, at);
    if (found < 0) return null;
    gaps += found - at;
    at = found + 1;
  }
  return 400 - gaps - path.length;
}

export function rankPaths(paths: readonly string[], query: string, limit = 20): string[] {
  const scored: [string, number][] = [];
  for (const path of paths) {
    const s = score(path, query);
    if (s !== null) scored.push([path, s]);
  }
  scored.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return scored.slice(0, limit).map(([path]) => path);
}
