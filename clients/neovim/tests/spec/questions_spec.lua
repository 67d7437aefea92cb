-- Permission questions as the daemon asks them: plan approval with feedback, the rule an
-- "always" answer saves, and the mode a session starts in.
local H = require("helpers")

local function exit_plan(plan)
  return H.tool("ExitPlanMode", { plan = plan })
end
local PLAN_1 = "1. Change the greeting\n2. Run the tests"
local PLAN_2 = "1. Keep the greetings in a table\n2. Change the greeting there"

describe("questions", function()
  after_each(function()
    if H._input then
      vim.ui.input = H._input
      H._input = nil
    end
    H.reset()
  end)

  it("approve a plan: keep planning with feedback, then start accepting edits", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      { exit_plan(PLAN_1) },
      { expect = { contains = "use a table" }, blocks = { exit_plan(PLAN_2) } },
      { H.tool("Write", { file_path = "NOTES.md", content = "planned\n" }) },
      { H.say("done") },
    }), { permission_mode = "plan" })
    local s = H.session()
    assert.equals("plan", s.mode)
    local previews = {}
    local calls = H.stub_select(function(items, opts)
      assert.equals("tether.plan", opts.kind)
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_config(win).relative ~= "" then
          local buf = vim.api.nvim_win_get_buf(win)
          previews[#previews + 1] = { filetype = vim.bo[buf].filetype, text = H.text(buf) }
        end
      end
      local want = #previews == 1 and "plan_keep" or "plan_accept_edits"
      return H.find(items, "optionId", want)
    end)
    local inputs = {}
    H._input = vim.ui.input
    vim.ui.input = function(opts, on_confirm)
      inputs[#inputs + 1] = opts.prompt
      on_confirm("use a table")
    end

    assert.equals("end_turn", H.prompt(s, "plan the greeting change", 20000).stopReason)

    assert.equals(2, #calls, "two plans asked; the Write in acceptEdits did not ask")
    assert.same(
      { "Start (ask before edits)", "Start (accept edits)", "Keep planning" },
      vim.tbl_map(calls[1].opts.format_item, calls[1].items)
    )
    assert.matches("plan is ready", calls[1].opts.prompt, 1, true)
    assert.same({ "What should change in the plan? " }, inputs, "feedback only for Keep planning")
    assert.same({ filetype = "markdown", text = PLAN_1 }, previews[1])
    assert.same({ filetype = "markdown", text = PLAN_2 }, previews[2])
    -- Both plans stay in the chat, readable (not folded away).
    local chat = s.chat:contents()
    assert.matches(PLAN_1, chat, 1, true)
    assert.matches(PLAN_2, chat, 1, true)
    local win = s.chat:windows()[1]
    local row = s.chat.text:row_of(s.chat.text.order[1].key)
    assert.equals(-1, vim.api.nvim_win_call(win, function()
      return vim.fn.foldclosed(row + 2)
    end))
    assert.equals("acceptEdits", s.mode)
    assert.matches("accept edits", vim.wo[win].winbar, 1, true)
    assert.equals("planned\n", H.read(root .. "/NOTES.md"))
  end)

  it("show the exact rule an 'always' answer saves", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      { H.tool("Bash", { command = "python -m unittest -v" }) },
      { H.say("ok") },
    }))
    local calls = H.stub_select(function(items)
      return H.find(items, "kind", "reject_once")
    end)
    local s = H.session()
    H.prompt(s, "run the tests")
    assert.equals(1, #calls)
    local labels = vim.tbl_map(calls[1].opts.format_item, calls[1].items)
    -- Whatever rule the daemon suggests (its narrowing is the daemon's business), the picker
    -- shows exactly that rule before it is saved.
    local always = H.find(calls[1].items, "kind", "allow_always")
    assert.matches("^Bash%(python", always.rule)
    assert.is_truthy(vim.tbl_contains(labels, "Always allow " .. always.rule), vim.inspect(labels))
    assert.matches("⊘ .* — Rejected by you", s.chat:contents())
  end)

  it("show the mode the settings start a session in", function()
    local root = H.workspace()
    H.write(root .. "/.tether/settings.json", vim.json.encode({ permissions = { defaultMode = "acceptEdits" } }))
    H.setup(H.script(root, {}))
    vim.cmd("Tether")
    local s = H.session()
    assert.equals("acceptEdits", s.mode)
    assert.matches("accept edits", vim.wo[s.chat:windows()[1]].winbar, 1, true)
  end)

  it("format an 'always' option whose name lacks the rule with the rule", function()
    local label = require("tether.permission").label
    assert.equals("Always allow — saves the rule Bash(ls:*)", label({ name = "Always allow", rule = "Bash(ls:*)" }))
    assert.equals("Always allow Bash(ls:*)", label({ name = "Always allow Bash(ls:*)", rule = "Bash(ls:*)" }))
  end)
end)
