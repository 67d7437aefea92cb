/** The chat's fixed parts: header (session, folder, model, mode), the set-up card, plan,
 * background tasks, queued prompts, meter. New session and history live in the view's
 * title bar (VS Code's own toolbar), once. */
import { ChatState } from '../core/chatState';
import { contextMeter } from '../core/format';
import { ConnectionView } from '../core/messages';
import { promptText } from '../core/promptText';
import { SetupState } from '../core/setup';
import { MODES, Mode } from '../core/wire';
import { send } from './vscodeApi';
import { button, codeText, h, icon } from './dom';

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
  private readonly folder = h('span', { class: 'session-folder', hidden: true });
  private readonly model = h('span', { class: 'model', hidden: true });
  private readonly mode: HTMLSelectElement;

  constructor() {
    this.mode = h('select', { id: 'mode', 'aria-label': 'Permission mode', title: 'Permission mode' });
    for (const m of MODES) this.mode.append(h('option', { value: m }, MODE_NAMES[m]));
    this.mode.addEventListener('change', () => send({ type: 'setMode', mode: this.mode.value as Mode }));
    this.el = h(
      'header',
      { class: 'bar' },
      h('div', { class: 'session' }, this.title, this.folder),
      h('div', { class: 'bar-row' }, this.model, this.mode),
    );
  }

  render(state: ChatState, connection: ConnectionView): void {
    const first = state.items.find((i) => i.kind === 'user');
    const text = state.title ?? (first && first.kind === 'user' ? promptText(first.content) : '');
    this.title.textContent = text.trim() || 'New session';
    this.title.title = this.title.textContent;
    this.folder.hidden = !(connection.multiRoot && state.folder);
    this.folder.textContent = state.folder ? state.folder.name : '';
    this.folder.title = state.folder ? `Workspace folder: ${state.folder.name}` : '';
    this.model.hidden = !connection.model;
    this.model.replaceChildren(icon('hubot'), ` ${connection.model ?? ''}`);
    this.model.title = connection.modelDetail ? `Model: ${connection.modelDetail}` : '';
    this.model.setAttribute('aria-label', `Model ${connection.model ?? 'unknown'}`);
    if (this.mode.value !== state.mode) this.mode.value = state.mode;
  }
}

export function renderBanner(el: HTMLElement, connection: ConnectionView): void {
  const text: Record<ConnectionView['status'], string> = {
    starting: 'Starting the Tether daemon…',
    ready: '',
    restarting: `The Tether daemon stopped; ${connection.message ?? 'restarting'}…`,
    down: connection.message ?? 'The Tether daemon is not running.',
  };
  // A problem with a fix has its own card; the banner is for passing states.
  el.hidden = connection.status === 'ready' || (connection.status === 'down' && connection.setup !== null);
  el.textContent = text[connection.status];
  el.className = `banner ${connection.status}`;
}

/** What keeps the user from a first prompt, with the buttons that fix it. */
export function renderSetup(el: HTMLElement, setup: SetupState | null, promptKept: boolean): void {
  el.hidden = setup === null;
  if (!setup) {
    el.replaceChildren();
    return;
  }
  el.dataset.problem = setup.problem;
  const actions = h('div', { class: 'setup-actions' });
  setup.actions.forEach((a, i) => {
    const b = button(a.label, { class: i === 0 ? 'primary' : 'secondary', 'data-action': a.id }, a.label);
    b.addEventListener('click', () => send({ type: 'setupAction', action: a.id }));
    actions.append(b);
  });
  el.replaceChildren(
    h('h2', {}, icon(setup.problem === 'no_key' || setup.problem === 'no_model' ? 'key' : 'tools'), ` ${setup.title}`),
    h('p', {}, ...codeText(setup.detail)),
    actions,
  );
  if (promptKept) el.append(h('p', { class: 'kept' }, icon('info'), ' Your message is kept in the box below; send it once this is done.'));
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
  const details = h('details', { open: wasOpen || undefined }, h('summary', {}, icon('checklist'), ` Todo ${done}/${state.plan.length}`), list);
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

/** Prompts sent during a turn, until the daemon takes them in at its next step. */
export function renderQueue(el: HTMLElement, state: ChatState): void {
  el.hidden = state.queued.length === 0;
  el.replaceChildren(
    ...state.queued.map((q) =>
      h('div', { class: 'queued', role: 'status', title: 'Queued: the agent reads it at its next step' }, icon('clock'), h('span', { class: 'queued-label' }, 'Queued'), h('span', { class: 'queued-text' }, q.text || '(attachments)')),
    ),
  );
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
