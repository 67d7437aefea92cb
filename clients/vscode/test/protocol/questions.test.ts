/**
 * Permission questions against the real daemon, through the extension's question model:
 * the rule an "always" answer saves, rejections that say who rejected, a dismissed question
 * that waits for the card (and is withdrawn by a stop), and plan approval with feedback.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ChatItem, ToolCard } from '../../src/core/chatState';
import { toolCardView } from '../../src/core/toolView';
import { Harness, startHarness, waitFor } from '../support/daemon';

const harnesses: Harness[] = [];
after(async () => {
  await Promise.all(harnesses.map((h) => h.stop()));
});

async function start(script: unknown[], mode?: 'default' | 'plan'): Promise<Harness> {
  const h = await startHarness({ script, mode });
  harnesses.push(h);
  return h;
}

function cards(h: Harness): ToolCard[] {
  return h.controller.state.items.filter((i: ChatItem): i is ToolCard => i.kind === 'tool');
}

const PLAN_1 = '# Plan\n1. Fix `mean()` in calc/ops.py';
const PLAN_2 = '# Plan\n1. Fix `mean()`\n2. Add a test for the empty list';

describe('permission questions', () => {
  it('an "always" answer shows the rule it saves; a rejected call says so, without the model\'s text', async () => {
    const h = await start([
      [{ type: 'tool_use', name: 'Bash', input: { command: 'python -m unittest -v', description: 'Run the tests' } }],
      [{ type: 'text', text: 'Not running them, then.' }],
    ]);
    h.answer = () => 'reject_once';
    const result = await h.controller.send([{ type: 'text', text: 'run the tests' }]);
    assert.equal(result?.stopReason, 'end_turn');
    const [asked] = h.permissions;
    const always = asked.options.find((o) => o.kind === 'allow_always');
    assert.ok(always?.rule, JSON.stringify(asked.options));
    assert.ok(always.name.includes(always.rule), 'the rule is in the answer\'s name');
    const [card] = cards(h);
    assert.equal(card.rejected, 'user');
    const view = toolCardView(card);
    assert.equal(view.statusLabel, 'Rejected by you');
    assert.equal(view.text, undefined, 'the text meant for the model is not shown');
    assert.doesNotMatch(JSON.stringify(card.content), /Do not retry|stop and wait/i);
  });

  it('a dismissed question waits for the card; answered there, the turn goes on', async () => {
    const h = await start([
      [{ type: 'tool_use', name: 'Bash', input: { command: 'touch hello.txt', description: 'Make hello.txt' } }],
      [{ type: 'text', text: 'Said hi.' }],
    ]);
    h.answer = () => null; // Escape on the modal
    const turn = h.controller.send([{ type: 'text', text: 'say hi' }]);
    const id = await h.waitFor(() => h.permissions[0] && { sessionId: h.permissions[0].sessionId, toolCallId: h.permissions[0].toolCall.toolCallId }, 'the question');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(h.controller.state.busy, true, 'the turn waits');
    assert.ok(cards(h)[0].question, 'the card still asks');
    const allow = h.permissions[0].options.find((o) => o.kind === 'allow_once')!;
    assert.equal(h.pending.answer(id, allow.optionId), true);
    assert.equal((await turn)?.stopReason, 'end_turn');
    assert.equal(toolCardView(cards(h)[0]).exitCode, 0);
  });

  it('stopping the turn withdraws an open question', async () => {
    const h = await start([[{ type: 'tool_use', name: 'Bash', input: { command: 'touch hello.txt', description: 'Make hello.txt' } }]]);
    h.answer = () => null;
    const turn = h.controller.send([{ type: 'text', text: 'say hi' }]);
    const id = await h.waitFor(() => h.permissions[0] && { sessionId: h.permissions[0].sessionId, toolCallId: h.permissions[0].toolCall.toolCallId }, 'the question');
    await h.controller.stop();
    assert.equal((await turn)?.stopReason, 'cancelled');
    await waitFor(() => !h.pending.isPending(id), 'the question withdrawn');
    assert.equal(cards(h)[0].question, undefined, 'the card no longer asks');
  });

  it('a plan kept with feedback stays in the chat, the next plan arrives, and starting it switches the mode', async () => {
    const h = await start(
      [
        [{ type: 'tool_use', name: 'ExitPlanMode', input: { plan: PLAN_1 } }],
        { expect: { contains: 'add a test for the empty list' }, blocks: [{ type: 'tool_use', name: 'ExitPlanMode', input: { plan: PLAN_2 } }] },
        [{ type: 'text', text: 'Starting with step 1.' }],
      ],
      'plan',
    );
    const answers = [{ optionId: 'plan_keep', feedback: 'Please add a test for the empty list too' }, { optionId: 'plan_accept_edits' }];
    h.answer = () => answers.shift() ?? null;
    const result = await h.controller.send([{ type: 'text', text: 'plan the fix' }]);
    assert.equal(result?.stopReason, 'end_turn', h.stderr());
    assert.deepEqual(h.permissions.map((p) => [p.kind, p.plan]), [['plan', PLAN_1], ['plan', PLAN_2]]);
    const [first, second] = cards(h).map((c) => [c, toolCardView(c)] as const);
    assert.equal(first[1].plan, PLAN_1, 'the kept plan stays visible');
    assert.equal(first[1].status, 'rejected');
    assert.deepEqual(first[0].answered, { label: 'Keep planning', optionId: 'plan_keep', feedback: 'Please add a test for the empty list too' });
    assert.equal(first[1].text, undefined);
    assert.equal(second[1].plan, PLAN_2);
    assert.equal(second[0].status, 'completed');
    assert.equal(h.controller.state.mode, 'acceptEdits');
  });
});
