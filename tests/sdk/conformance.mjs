// One program written for the TypeScript Agent SDK, run item by item against whichever CLI
// CLAUDE_CLI names (Claude Code's own, or Tether): tests/e2e/test_agent_sdk_conformance.py
// runs it against both, on the same fake Messages API, and compares what each item saw.
//
// Environment: CLAUDE_CLI (the executable), WORKSPACE (the project directory), MCP_SERVER (a
// Python stdio MCP server: "python path"), ITEMS (comma-separated, default: all). Prints one
// JSON object: {item: {messages, callbacks, ...}} with every message the SDK yielded.

import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
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
    push(text, extra = {}) {
      const content = typeof text === "string" ? text : text.content;
      waiting.push({ type: "user", message: { role: "user", content }, parent_tool_use_id: null, ...extra });
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
  // mcp_message; its result must reach the model. Its tool policies: always_deny holds
  // for rm although another entry cannot be read (that one is dropped, as in Claude Code).
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
        tool("rm", "Remove everything", {}, async () => {
          calls.push(["rm"]);
          return { content: [{ type: "text", text: "removed" }] };
        }),
      ],
    });
    const policies = [{ name: "rm", permission_policy: "always_deny" }, { name: 7 }];
    const options = {
      ...base,
      mcpServers: { calc: { ...calc, tools: policies } },
      allowedTools: ["mcp__calc__add", "mcp__calc__rm"],
    };
    const messages = await collect(query({ prompt: "add 2 and 40", options }));
    return { messages, callbacks: calls };
  },

  // A stdio MCP server the CLI starts: the SDK sends it in initialize (--await-initialize).
  // A PostToolUse hook replaces its output (updatedMCPToolOutput); an additional directory
  // that does not exist is passed over.
  async mcp_external() {
    const [command, ...args] = process.env.MCP_SERVER.split(" ");
    const replace = async () => ({
      hookSpecificOutput: {
        hookEventName: "PostToolUse",
        updatedMCPToolOutput: { content: [{ type: "text", text: "REPLACED-BY-HOOK" }] },
      },
    });
    const q = query({
      prompt: "echo through the external server",
      options: {
        ...base,
        mcpServers: { ext: { type: "stdio", command, args } },
        allowedTools: ["mcp__ext__echo"],
        hooks: { PostToolUse: [{ matcher: "mcp__ext__echo", hooks: [replace] }] },
        additionalDirectories: [`${cwd}/no-such-directory`],
      },
    });
    const messages = await collect(q);
    return { messages, callbacks: [] };
  },

  // Hook callbacks of several events, with outputs: a deny by a spaced list matcher, a
  // PreToolUse that misses its timeout (the call must not run), a PostToolUse that redacts
  // a command's output (updatedToolOutput), a failing tool (PostToolUseFailure), a prompt
  // hook's systemMessage, and the end of the turn.
  async hooks() {
    const seen = [];
    const record = (output) => async (input) => {
      seen.push([input.hook_event_name, input.tool_name ?? input.source ?? null]);
      return output(input);
    };
    const slow = async (input) => {
      if (input.tool_input.command.includes("late")) await new Promise((r) => setTimeout(r, 2500));
      return {};
    };
    const hooks = {
      SessionStart: [{ hooks: [record(() => ({}))] }],
      UserPromptSubmit: [{ hooks: [record(() => ({ systemMessage: "house style applies" }))] }],
      PreToolUse: [
        {
          matcher: "Write | Edit",
          hooks: [
            record(() => ({
              hookSpecificOutput: {
                hookEventName: "PreToolUse",
                permissionDecision: "deny",
                permissionDecisionReason: "no edits in this test",
              },
            })),
          ],
        },
        { matcher: "Bash", timeout: 1, hooks: [record(slow)] },
      ],
      PostToolUse: [
        { hooks: [record(() => ({}))] },
        {
          matcher: "Bash",
          hooks: [
            async (input) => ({
              hookSpecificOutput: {
                hookEventName: "PostToolUse",
                updatedToolOutput: { ...input.tool_response, stdout: "REDACTED-BY-HOOK" },
              },
            }),
          ],
        },
      ],
      PostToolUseFailure: [{ hooks: [record(() => ({}))] }],
      Stop: [{ hooks: [record(() => ({}))] }],
    };
    const options = { ...base, hooks, allowedTools: ["Bash"] };
    const messages = await collect(query({ prompt: "look around", options }));
    return { messages, callbacks: seen };
  },

  // canUseTool: an allow that rewrites the input (updatedInput, with a field the tool does
  // not have), an allow with an empty updatedInput (the call as asked) that adds a rule for
  // the session (updatedPermissions), and a deny. A PermissionRequest hook answers the
  // last question before canUseTool does: the first answer wins. settingSources: [] keeps
  // the project's settings (a rule denying one.txt) out.
  async permissions() {
    const asked = [];
    const hooked = [];
    const canUseTool = async (name, input) => {
      asked.push([name, input.command ?? input.file_path.split("/").pop()]);
      if (name === "Write") {
        return {
          behavior: "allow",
          updatedInput: { ...input, content: "written as the program said\n", mood: "cheerful" },
        };
      }
      if (input.command === "touch one.txt") {
        const rule = { toolName: "Bash", ruleContent: "touch two.txt" };
        return {
          behavior: "allow",
          updatedInput: {},
          updatedPermissions: [{ type: "addRules", rules: [rule], behavior: "allow", destination: "session" }],
        };
      }
      await new Promise((r) => setTimeout(r, 1000)); // the hook answers first
      return { behavior: "allow", updatedInput: input };
    };
    const decide = async (input) => {
      hooked.push([input.tool_name, input.tool_input.command ?? null]);
      if (input.tool_input.command !== "touch three.txt") return {};
      const decision = { behavior: "deny", message: "not this one" };
      return { hookSpecificOutput: { hookEventName: "PermissionRequest", decision } };
    };
    const hooks = { PermissionRequest: [{ hooks: [decide] }] };
    const settings = `${cwd}/.claude/settings.json`;
    mkdirSync(`${cwd}/.claude`, { recursive: true });
    writeFileSync(settings, JSON.stringify({ permissions: { deny: ["Bash(touch one.txt)"] } }));
    try {
      const options = { ...base, canUseTool, hooks, settingSources: [] };
      const messages = await collect(query({ prompt: "make some files", options }));
      return { messages, callbacks: { asked, hooked } };
    } finally {
      rmSync(settings);
    }
  },

  // set_permission_mode (plan) and set_model before the prompt, on a streaming session;
  // the plan approved with a setMode update: the model is told it may go on, the edit
  // needs no question in acceptEdits.
  async modes() {
    const asked = [];
    const canUseTool = async (name, input) => {
      asked.push([name, input.file_path ?? null]); // Claude Code keeps the plan in a file
      if (name !== "ExitPlanMode") return { behavior: "deny", message: "only the plan is asked" };
      const setMode = { type: "setMode", mode: "acceptEdits", destination: "session" };
      return { behavior: "allow", updatedInput: input, updatedPermissions: [setMode] };
    };
    const prompts = promptStream();
    const q = query({ prompt: prompts, options: { ...base, canUseTool } });
    await q.setPermissionMode("plan");
    await q.setModel("sonnet");
    prompts.push("tidy up the farewell");
    const messages = await collect(q, async (message) => {
      if (message.type === "result") prompts.end();
    });
    return { messages, callbacks: asked };
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

  // Prompts as Claude Code takes them: one with shouldQuery: false starts no turn and joins
  // the next; a document block reaches the model; a prompt sent while a tool call waits
  // joins the running turn (and passes the prompt hooks); a prompt a UserPromptSubmit hook
  // refuses ends its turn as a success with a system/informational line.
  async prompts() {
    const WORDS = ["summarise", "farewell", "forbidden"];
    const seen = [];
    const prompts = promptStream();
    const check = async (input) => {
      // Which prompt (Tether's hook text also holds the held prompt's and the document's
      // text, docs/agent-sdk.md).
      seen.push(["UserPromptSubmit", WORDS.find((word) => input.prompt.includes(word)) ?? input.prompt]);
      return input.prompt.includes("forbidden") ? { decision: "block", reason: "not that word" } : {};
    };
    const canUseTool = async (name, input) => {
      seen.push(["canUseTool", name]);
      prompts.push("also mind the farewell");
      await new Promise((resolve) => setTimeout(resolve, 500));
      return { behavior: "allow", updatedInput: input };
    };
    const hooks = { UserPromptSubmit: [{ hooks: [check] }] };
    const q = query({ prompt: prompts, options: { ...base, hooks, canUseTool } });
    prompts.push("context: the secret is mango", { shouldQuery: false });
    const document = { type: "document", source: { type: "text", media_type: "text/plain", data: "The plan is to ship." } };
    prompts.push({ content: [{ type: "text", text: "summarise the document" }, document] });
    let refusing = false;
    const messages = await collect(q, async (message) => {
      if (message.type !== "result") return;
      if (refusing) prompts.end();
      else if ((message.result ?? "").includes("summary")) {
        refusing = true;
        prompts.push("forbidden words");
      }
    });
    return { messages, callbacks: seen };
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

  // An agent the program defines, run by the Agent tool on the model it names; its steps
  // reach the program (parent_tool_use_id), its hook inputs and questions name it.
  async agents() {
    const seen = [];
    const agents = {
      reviewer: {
        description: "Reviews a change",
        prompt: "You are the strict reviewer.",
        tools: ["Read", "Write"],
        model: "sonnet",
      },
    };
    const hooks = {
      PreToolUse: [{ hooks: [async (i) => (seen.push(["PreToolUse", i.tool_name, i.agent_type ?? null, !!i.agent_id]), {})] }],
    };
    const canUseTool = async (name, input, { agentID }) => {
      seen.push(["canUseTool", name, !!agentID]);
      return { behavior: "allow", updatedInput: input };
    };
    const options = { ...base, agents, hooks, canUseTool };
    const messages = await collect(query({ prompt: "review my change", options }));
    return { messages, callbacks: seen };
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
