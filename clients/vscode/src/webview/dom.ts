/** A tiny element builder: text goes in as text nodes, never as HTML. */
export type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (key === 'class') el.className = String(value);
    else el.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return el;
}

export function icon(name: string, label?: string): HTMLElement {
  const el = h('i', { class: `codicon codicon-${name}${name === 'loading' ? ' codicon-modifier-spin' : ''}` });
  if (label) el.setAttribute('aria-label', label);
  else el.setAttribute('aria-hidden', 'true');
  return el;
}

export function button(label: string, attrs: Record<string, string | boolean | undefined>, ...children: Child[]): HTMLButtonElement {
  return h('button', { type: 'button', 'aria-label': label, title: label, ...attrs }, ...children);
}

/** Plain text where `backticks` mark code: text nodes and <code> elements, never HTML. */
export function codeText(text: string): (Node | string)[] {
  return text.split(/(`[^`]+`)/).filter(Boolean).map((part) => (part.startsWith('`') && part.endsWith('`') && part.length > 1 ? h('code', {}, part.slice(1, -1)) : part));
}
