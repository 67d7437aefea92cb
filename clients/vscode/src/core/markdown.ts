/**
 * Markdown for agent messages. Raw HTML is off (model output is not trusted markup) and
 * only http(s), mailto and file links survive; rendering a partial message mid-stream is
 * fine because markdown-it closes open constructs itself.
 */
import MarkdownIt from 'markdown-it';

const SAFE_LINK = /^(https?:|mailto:|file:|#|\.{0,2}\/|[\w.-]+(\/|$))/i;

const md = new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false });
md.validateLink = (url: string) => SAFE_LINK.test(url.trim()) && !/^\s*(javascript|vbscript|data):/i.test(url);

// Links open through the extension (files in the editor, the web outside); mark them.
const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrSet('data-link', '');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

export function renderMarkdown(text: string): string {
  return md.render(text);
}
