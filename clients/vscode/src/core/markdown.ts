/**
 * Markdown for agent messages and plans. Raw HTML is off (model output is not trusted
 * markup) and only http(s), mailto and file links survive; rendering a partial message
 * mid-stream is fine because markdown-it closes open constructs itself.
 *
 * Fenced code is highlighted by highlight.js (its output is escaped HTML; the colours come
 * from the theme through chat.css) and gets a header with its language and a Copy button.
 */
import hljs from 'highlight.js/lib/common';
import MarkdownIt from 'markdown-it';

const SAFE_LINK = /^(https?:|mailto:|file:|#|\.{0,2}\/|[\w.-]+(\/|$))/i;

const md = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  typographer: false,
  highlight: (code, lang) => highlight(code, lang),
});
md.validateLink = (url: string) => SAFE_LINK.test(url.trim()) && !/^\s*(javascript|vbscript|data):/i.test(url);

// Links open through the extension (files in the editor, the web outside); mark them.
const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrSet('data-link', '');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

const defaultFence = md.renderer.rules.fence!;
md.renderer.rules.fence = (tokens, idx, options, env, self) => {
  const lang = languageOf(tokens[idx].info);
  const label = md.utils.escapeHtml(lang || 'text');
  return (
    `<div class="code-block"><div class="code-head"><span class="code-lang">${label}</span>` +
    `<button type="button" class="copy" data-copy title="Copy code" aria-label="Copy code"><i class="codicon codicon-copy" aria-hidden="true"></i> Copy</button></div>` +
    `${defaultFence(tokens, idx, options, env, self)}</div>`
  );
};

function languageOf(info: string): string {
  return info.trim().split(/\s+/)[0] ?? '';
}

/** Highlighted HTML for a known language; '' lets markdown-it escape the code as is. */
export function highlight(code: string, lang: string): string {
  const name = languageOf(lang).toLowerCase();
  if (!name || !hljs.getLanguage(name)) return '';
  try {
    return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
  } catch {
    return '';
  }
}

export function renderMarkdown(text: string): string {
  return md.render(text);
}

/** Where the top-level blocks of `text` begin (character offsets), for streaming: every
 * block but the last is complete once the next has begun. */
export function blockStarts(text: string): number[] {
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const starts: number[] = [];
  for (const token of md.parse(text, {})) {
    if (token.level === 0 && token.map && token.nesting !== -1) starts.push(lineStarts[token.map[0]]);
  }
  return starts;
}
