-- Pure parts: option merging and the formatting of updates. No daemon here.
local config = require("tether.config")
local render = require("tether.render")

describe("config", function()
  after_each(function()
    config.setup({})
  end)

  it("merges options over the defaults", function()
    local opts = config.setup({ model = "anthropic:x", chat = { position = "below" } })
    assert.equals("anthropic:x", opts.model)
    assert.equals("below", opts.chat.position)
    assert.equals(config.defaults.chat.size, opts.chat.size)
    assert.same({ "tether", "serve" }, opts.cmd)
  end)

  it("warns about a bad option and keeps the default", function()
    local messages = {}
    local notify = vim.notify
    vim.notify = function(msg)
      messages[#messages + 1] = msg
    end
    local opts = config.setup({ cmd = "tether serve", permission_mode = "yolo" })
    vim.wait(100, function()
      return #messages == 2
    end)
    vim.notify = notify
    assert.same({ "tether", "serve" }, opts.cmd)
    assert.is_nil(opts.permission_mode)
    assert.matches("option cmd should be a table", messages[1], 1, true)
    assert.matches("unknown permission_mode yolo", messages[2], 1, true)
  end)
end)

describe("render", function()
  it("labels links by path and line range", function()
    local uri = vim.uri_from_fname("/ws/src/a.py")
    assert.equals("src/a.py", render.link_label({ type = "resource_link", uri = uri }, "/ws"))
    local lines = { start = { line = 1, character = 0 }, ["end"] = { line = 3, character = 0 } }
    assert.equals("src/a.py:2-3", render.link_label({ type = "resource_link", uri = uri, range = lines }, "/ws"))
    local one = { start = { line = 4, character = 2 }, ["end"] = { line = 4, character = 9 } }
    assert.equals("/ws/src/a.py:5", render.link_label({ type = "resource_link", uri = uri, range = one }))
  end)

  it("summarises usage and the plan", function()
    local usage = {
      inputTokens = 12345,
      outputTokens = 678,
      costUsd = 0.0123,
      contextTokens = 50000,
      contextWindow = 200000,
    }
    assert.equals("12.3k in · 678 out · $0.0123 · ctx 25%", render.usage(usage))
    local plan = {
      { content = "Read", status = "completed" },
      { content = "Fix", status = "in_progress", activeForm = "Fixing" },
      { content = "Test", status = "pending" },
    }
    assert.equals("plan 1/3 Fixing", render.plan_summary(plan))
    assert.same({ "☑ Read", "◐ Fix", "☐ Test" }, render.plan_lines(plan))
  end)

  it("renders tool bodies: command, diff, output, elided past the limit", function()
    local tool = {
      title = "Bash",
      status = "completed",
      toolKind = "execute",
      rawInput = { command = "ls" },
      content = {
        { type = "diff", uri = "file:///a", oldText = "a\nb\n", newText = "a\nc\n" },
        { type = "terminal", output = "1\n2\n3\n4\n", exitCode = 0 },
      },
    }
    local body = render.tool_body(tool, 3)
    assert.same({
      "```sh",
      "$ ls",
      "```",
      "```diff",
      "@@ -1,2 +1,2 @@",
      " a",
      "-b",
      "… 1 more lines",
      "```",
      "```",
      "1",
      "2",
      "3",
      "… 2 more lines",
      "```",
    }, body)
    assert.equals("✓ Bash", render.tool_header(config.defaults.icons, tool))
  end)

  it("closes a turn with a line only when it did not end normally", function()
    assert.is_nil(render.stop_line("end_turn"))
    assert.equals("_Cancelled._", render.stop_line("cancelled"))
    assert.equals("**Error:** boom", render.stop_line("error", { code = "x", message = "boom" }))
  end)
end)
