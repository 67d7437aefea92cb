/** The chat's fixed parts: header (session, new, mode), plan, background tasks, meter. */
import { ChatState } from '../core/chatState';
import { contextMeter } from '../core/format';
import { ConnectionStatus } from '../core/messages';
import { MODES, Mode } from '../core/wire';
import { send } from './vscodeApi';
import { button, h, icon } from './dom';

const MODE_NAMES: Record<Mode, string> = {
  default: 'Ask first',
  acceptEdits: 'Accept edits',
  plan: 'Plan only',
  bypassPermissions: 'Bypass permissions',
  dontAsk: "Don't ask (deny)",
};

export class Header {
  readonly el: HTMLElement;
  private readonly title = h('span', { class: 'session-title' });
  private readonly mode: HTMLSelectElement;

  constructor() {
    const sessions = button('Sessions: resume an earlier one or start a new one', { class: 'session-button' }, icon('history'), this.title);
    sessions.addEventListener('click', () => send({ type: 'pickSession' }));
    const fresh = button('New session', { class: 'icon-button' }, icon('add'));
    fresh.addEventListener('click', () => send({ type: 'newSession' }));
    this.mode = h('select', { id: 'mode', 'aria-label': 'Permission mode', title: 'Permission mode' });
    for (const m of MODES) this.mode.append(h('option', { value: m }, MODE_NAMES[m]));
    this.mode.addEventListener('change', () => send({ type: 'setMode', mode: this.mode.value as Mode }));
    this.el = h('header', { class: 'bar' }, sessions, fresh, this.mode);
  }

  render(state: ChatState): void {
    const first = state.items.find((i) => i.kind === 'user');
    const text = state.title ?? (first && first.kind === 'user' ? first.content.map((c) => (c.type === 'text' ? c.text : '')).join(' ') : '');
    this.title.textContent = text.trim() || 'New session';
    if (this.mode.value !== state.mode) this.mode.value = state.mode;
  }
}

export function renderBanner(el: HTMLElement, status: ConnectionStatus, message?: string): void {
  const text: Record<ConnectionStatus, string> = {
    starting: 'Starting the Tether daemon…',
    ready: '',
    restarting: `The Tether daemon stopped; ${message ?? 'restarting'}…`,
    down: message ?? 'The Tether daemon is not running.',
  };
  el.textContent = text[status];
  el.hidden = status === 'ready';
  el.className = `banner ${status}`;
}

export function renderPlan(el: HTMLElement, state: ChatState): void {
  el.hidden = state.plan.length === 0;
  if (el.hidden) return;
  const done = state.plan.filter((e) => e.status === 'completed').length;
  const wasOpen = el.querySelector('details')?.open ?? true;
  const list = h('ol', { class: 'plan-list' });
  for (const entry of state.plan) {
    const name = entry.status === 'completed' ? 'pass-filled' : entry.status === 'in_progress' ? 'circle-large-filled' : 'circle-large-outline';
    const label = entry.status === 'in_progress' && entry.activeForm ? entry.activeForm : entry.content;
    list.append(h('li', { class: `plan-${entry.status}` }, icon(name), h('span', { class: 'sr-only' }, `${entry.status.replace('_', ' ')}: `), ` ${label}`));
  }
  const details = h('details', { open: wasOpen || undefined }, h('summary', {}, icon('checklist'), ` Plan ${done}/${state.plan.length}`), list);
  el.replaceChildren(details);
}

export function renderTasks(el: HTMLElement, state: ChatState): void {
  el.hidden = state.tasks.length === 0;
  if (el.hidden) return;
  const running = state.tasks.filter((t) => t.status === 'running').length;
  const list = h('ul', { class: 'task-list' });
  for (const t of state.tasks) {
    const name = t.status === 'running' ? 'loading' : t.status === 'completed' ? 'check' : t.status === 'killed' ? 'circle-slash' : 'error';
    list.append(h('li', { class: `task-${t.status}` }, icon(name, t.status), ` ${t.description}`, t.summary ? h('div', { class: 'task-summary' }, t.summary) : null));
  }
  el.replaceChildren(h('details', { open: running > 0 || undefined }, h('summary', {}, icon('server-process'), ` Background tasks (${running} running)`), list));
}

export function renderMeter(el: HTMLElement, state: ChatState): void {
  const meter = contextMeter(state.usage);
  const fill = el.querySelector<HTMLElement>('.fill') ?? el.appendChild(h('div', { class: 'fill' }));
  const label = el.querySelector<HTMLElement>('.label') ?? el.appendChild(h('span', { class: 'label' }));
  const pct = meter.fraction === null ? 0 : Math.round(meter.fraction * 100);
  fill.style.width = `${pct}%`;
  fill.classList.toggle('high', pct >= 80);
  label.textContent = meter.label;
  el.title = meter.detail;
  el.setAttribute('aria-valuenow', String(pct));
  el.setAttribute('aria-valuetext', meter.detail);
}
