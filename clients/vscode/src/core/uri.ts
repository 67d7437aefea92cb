/**
 * URIs from the daemon (Python's `Path.as_uri()`) and from VS Code (`Uri.toString()`) escape
 * characters differently; compare them by this key, never as raw strings.
 */
export function uriKey(uri: string): string {
  let key: string;
  try {
    key = decodeURIComponent(uri);
  } catch {
    key = uri;
  }
  // file:///C:/x and file:///c:/x are the same file on Windows.
  return key.replace(/^file:\/\/\/([A-Za-z]):/, (_m, d: string) => `file:///${d.toLowerCase()}:`);
}
