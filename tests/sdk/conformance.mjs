// One program written for the TypeScript Agent SDK, run item by item against whichever CLI
// CLAUDE_CLI names (Claude Code's own, or Tether): tests/e2e/test_agent_sdk_conformance.py
// runs it against both, on the same fake Messages API, and compares what each item saw.
//
// Environment: CLAUDE_CLI (the executable), WORKSPACE (the project directory), MCP_SERVER (a
// Python stdio MCP server: "python path"), ITEMS (comma-separated, default: all). Prints one
// JSON object: {item: {messages, callbacks, ...}} with every message the SDK yielded.

import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

const cli = process.env.CLAUDE_CLI;
const cwd = process.env.WORKSPACE;
const base = { pathToClaudeCodeExecutable: cli, cwd, stderr: (text) => process.stderr.write(text) };

async function collect(q, onMessage = async () => {}) {
  const messages = [];
  for await (const message of q) {
    messages.push(message);
    await onMessage(message, messages);
  }
  return messages;
}

/** A prompt stream the item feeds by hand (streaming input mode). */
function promptStream() {
  const waiting = [];
  let wake = null;
  let done = false;
  return {
    push(text) {
      waiting.push({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null });
      wake?.();
    },
    end() {
      done = true;
      wake?.();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (waiting.length) yield waiting.shift();
        if (done) return;
        await new Promise((resolve) => (wake = resolve));
        wake = null;
      }
    },
  };
}

const items = {
  // An in-process MCP server (createSdkMcpServer): announced in initialize, called over
  // mcp_message; its result must reach the model.
  async mcp() {
    const calls = [];
    const calc = createSdkMcpServer({
      name: "calc",
      version: "1.0.0",
      tools: [
        tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async ({ a, b }) => {
          calls.push([a, b]);
          return { content: [{ type: "text", text: String(a + b) }] };
        }),
      ],
    });
    const messages = await collect(
      query({
        prompt: "add 2 and 40",
        options: { ...base, mcpServers: { calc }, allowedTools: ["mcp__calc__add"] },
      }),
    );
    return { messages, callbacks: calls };
  },

  // A stdio MCP server the CLI starts: the SDK sends it in initialize (--await-initialize).
  async mcp_external() {
    const [command, ...args] = process.env.MCP_SERVER.split(" ");
    const q = query({
      prompt: "echo through the external server",
      options: {
        ...base,
        mcpServers: { ext: { type: "stdio", command, args } },
        allowedTools: ["mcp__ext__echo"],
      },
    });
    const messages = await collect(q);
    return { messages, callbacks: [] };
  },

  // Hook callbacks of several events, with outputs: a PreToolUse deny, PostToolUse context,
  // a failing tool (PostToolUseFailure), the prompt and the end of the turn.
  async hooks() {
    const seen = [];
    const record = (output) => async (input) => {
      seen.push([input.hook_event_name, input.tool_name ?? input.source ?? null]);
      return output(input);
    };
    const hooks = {
      SessionStart: [{ hooks: [record(() => ({}))] }],
      UserPromptSubmit: [{ hooks: [record(() => ({}))] }],
      PreToolUse: [
        {
          matcher: "Bash",
          hooks: [
            record(() => ({
              hookSpecificOutput: {
                hookEventName: "PreToolUse",
                permissionDecision: "deny",
                permissionDecisionReason: "no shell in this test",
              },
            })),
          ],
        },
      ],
      PostToolUse: [{ hooks: [record(() => ({}))] }],
      PostToolUseFailure: [{ hooks: [record(() => ({}))] }],
      Stop: [{ hooks: [record(() => ({}))] }],
    };
    const messages = await collect(query({ prompt: "look around", options: { ...base, hooks } }));
    return { messages, callbacks: seen };
  },

  // canUseTool: an allow that rewrites the input (updatedInput), an allow that adds a rule
  // for the session (updatedPermissions), and a deny.
  async permissions() {
    const asked = [];
    const canUseTool = async (name, input, { suggestions }) => {
      asked.push([name, input.command ?? input.file_path.split("/").pop()]);
      if (name === "Write") {
        return { behavior: "allow", updatedInput: { ...input, content: "written as the program said\n" } };
      }
      if (input.command === "touch one.txt") {
        const rule = { toolName: "Bash", ruleContent: "touch two.txt" };
        return {
          behavior: "allow",
          updatedInput: input,
          updatedPermissions: [{ type: "addRules", rules: [rule], behavior: "allow", destination: "session" }],
        };
      }
      return { behavior: "deny", message: "not this one" };
    };
    const messages = await collect(
      query({ prompt: "make some files", options: { ...base, canUseTool } }),
    );
    return { messages, callbacks: asked };
  },

  // set_permission_mode and set_model before the prompt, on a streaming session.
  async modes() {
    const prompts = promptStream();
    const q = query({ prompt: prompts, options: base });
    await q.setPermissionMode("acceptEdits");
    await q.setModel("sonnet");
    prompts.push("tidy up the farewell");
    const messages = await collect(q, async (message) => {
      if (message.type === "result") prompts.end();
    });
    return { messages, callbacks: [] };
  },

  // interrupt() while a command runs: the turn ends as an error, the session goes on.
  async interrupt() {
    const prompts = promptStream();
    const q = query({ prompt: prompts, options: { ...base, allowedTools: ["Bash(python3:*)"] } });
    prompts.push("run the long command");
    let results = 0;
    const messages = await collect(q, async (message) => {
      const content = message.type === "assistant" ? message.message.content : [];
      if (content.some((block) => block.type === "tool_use")) {
        await new Promise((resolve) => setTimeout(resolve, 1500));
        await q.interrupt();
      }
      if (message.type === "result" && ++results === 1) prompts.push("are you there?");
      if (message.type === "result" && results === 2) prompts.end();
    });
    return { messages, callbacks: [] };
  },

  // A session resumed as a fork: a new id, the earlier conversation in the model's view.
  async resume() {
    const first = await collect(query({ prompt: "remember the word plum", options: base }));
    const sessionId = first.at(-1).session_id;
    const second = await collect(
      query({ prompt: "which word was it?", options: { ...base, resume: sessionId, forkSession: true } }),
    );
    return {
      messages: [...first, ...second],
      callbacks: [],
      forked: second.at(-1).session_id !== sessionId && second.every((m) => m.session_id !== sessionId),
    };
  },

  // includePartialMessages: the model's stream events.
  async partial() {
    const messages = await collect(
      query({ prompt: "say hello", options: { ...base, includePartialMessages: true } }),
    );
    return { messages, callbacks: [] };
  },

  // An agent the program defines, run by the Agent tool.
  async agents() {
    const agents = {
      reviewer: { description: "Reviews a change", prompt: "You are the strict reviewer.", tools: ["Read"] },
    };
    const messages = await collect(query({ prompt: "review my change", options: { ...base, agents } }));
    return { messages, callbacks: [] };
  },
};

const chosen = (process.env.ITEMS || Object.keys(items).join(",")).split(",");
const report = {};
for (const name of chosen) {
  try {
    report[name] = await items[name]();
  } catch (error) {
    report[name] = { error: String(error?.message ?? error) };
  }
}
process.stdout.write(JSON.stringify(report) + "\n");
