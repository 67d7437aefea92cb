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

  it("approve a plan in the chat: keep planning with feedback, then start accepting edits", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      { exit_plan(PLAN_1) },
      { expect = { contains = "use a table" }, blocks = { exit_plan(PLAN_2) } },
      { H.tool("Write", { file_path = "NOTES.md", content = "planned\n" }) },
      { H.say("done") },
    }), { permission_mode = "plan" })
    local s = H.session()
    assert.equals("plan", s.state.mode)
    local result
    H.send(s, "plan the greeting change", function(_, r)
      result = r
    end)
    local chat = H.chat(s)
    local function question()
      H.wait(15000, function()
        return #s.state.questions == 1
      end, "the plan question")
      return require("tether.state").open_questions(s.state)[1]
    end
    local q = question()
    local text = chat:contents()
    -- The plan is in the chat, readable, and the block lists what each key does.
    assert.matches(PLAN_1, text, 1, true)
    assert.matches("? The plan is ready. Start it?", text, 1, true)
    assert.matches("\\a  start, asking before edits", text, 1, true)
    assert.matches("\\e  start, accepting edits", text, 1, true)
    assert.matches("\\r  keep planning (say what should change)", text, 1, true)

    -- gr: the prompt area takes what should change; the plan stays in view above it.
    vim.api.nvim_set_current_win(chat:windows()[1])
    vim.api.nvim_feedkeys(vim.keycode("<LocalLeader>r"), "xt", false)
    assert.equals(chat.input.buf, vim.api.nvim_get_current_buf())
    local input_win = vim.api.nvim_get_current_win()
    assert.matches("What should change in the plan?", vim.wo[input_win].winbar, 1, true)
    assert.matches("↺ Keep planning: write what should change in the prompt area", chat:contents(), 1, true)
    vim.api.nvim_feedkeys(vim.keycode("iuse a table<Esc><CR>"), "xt", false)
    H.wait(5000, function()
      return s.state.index["q:" .. q.id].question.status == "answered"
    end, "the feedback to answer the question")
    -- What the user said is in the chat, and "keep planning" is not "rejected".
    text = chat:contents()
    assert.matches("↺ Kept planning. You said:\n> use a table", text, 1, true)
    H.wait(5000, function()
      return chat:contents():find("⊘ Leave plan mode with this plan — Kept planning", 1, true)
    end, "the plan's card to say so")
    assert.is_nil(chat:contents():find("Rejected by you", 1, true))
    assert.is_nil(vim.wo[input_win].winbar:find("What should change", 1, true))

    q = question()
    assert.matches(PLAN_2, chat:contents(), 1, true)
    vim.api.nvim_set_current_win(chat:windows()[1])
    vim.api.nvim_feedkeys(vim.keycode("<LocalLeader>e"), "xt", false)
    H.wait(20000, function()
      return result
    end, "the turn")
    assert.equals("end_turn", result.stopReason)
    assert.matches("✓ Plan accepted: start, accepting edits", chat:contents(), 1, true)
    assert.equals("acceptEdits", s.state.mode)
    assert.matches("accept edits", vim.wo[chat:windows()[1]].winbar, 1, true)
    assert.equals("planned\n", H.read(root .. "/NOTES.md"))
  end)

  it("show the exact rule an 'always' answer saves", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      { H.tool("Bash", { command = "python -m unittest -v" }) },
      { H.say("ok") },
    }))
    local s = H.session()
    local result
    H.send(s, "run the tests", function(_, r)
      result = r
    end)
    H.wait(15000, function()
      return #s.state.questions == 1
    end, "the question")
    local q = require("tether.state").open_questions(s.state)[1]
    -- Whatever rule the daemon suggests (its narrowing is the daemon's business), the chat
    -- shows exactly that rule before it is saved.
    local always = H.find(q.options, "kind", "allow_always")
    assert.matches("^Bash%(python", always.rule)
    assert.matches("\\A  always allow `" .. always.rule .. "` (press twice)", H.chat(s):contents(), 1, true)
    vim.api.nvim_set_current_win(H.chat(s):windows()[1])
    vim.api.nvim_feedkeys(vim.keycode("<LocalLeader>A"), "xt", false)
    assert.matches("\\A again saves the rule `" .. always.rule, H.chat(s):contents(), 1, true)
    -- On screen, exactly: Markdown does not eat the rule's `*`.
    local win = H.chat(s):windows()[1]
    vim.api.nvim_win_set_width(win, 100)
    -- Neovim 0.11 parses Markdown off the redraw (asynchronously): the concealing comes with
    -- a later redraw, so the screen is read again until it shows the rule exactly.
    local function screen_text()
      vim.cmd.redraw({ bang = true })
      local pos, screen = vim.fn.win_screenpos(win), {}
      for row = pos[1], pos[1] + vim.api.nvim_win_get_height(win) do
        local cells = {}
        for col = pos[2], pos[2] + 99 do
          cells[#cells + 1] = vim.fn.screenstring(row, col)
        end
        screen[#screen + 1] = table.concat(cells)
      end
      return table.concat(screen, "\n")
    end
    local exact = "\\A again saves the rule " .. always.rule .. " (for this workspace)"
    pcall(H.wait, 5000, function()
      return screen_text():find(exact, 1, true) ~= nil
    end, "the rule on screen")
    assert.matches(exact, screen_text(), 1, true)
    vim.api.nvim_feedkeys(vim.keycode("<LocalLeader>r"), "xt", false)
    H.wait(10000, function()
      return result
    end, "the turn")
    assert.matches("⊘ .* — Rejected by you", H.chat(s):contents())
    vim.cmd.wincmd("p")
  end)

  it("show the mode the settings start a session in", function()
    local root = H.workspace()
    H.write(root .. "/.tether/settings.json", vim.json.encode({ permissions = { defaultMode = "acceptEdits" } }))
    H.setup(H.script(root, {}))
    vim.cmd("Tether")
    local s = H.session()
    assert.equals("acceptEdits", s.state.mode)
    assert.matches("accept edits", vim.wo[H.chat(s):windows()[1]].winbar, 1, true)
  end)

  it("format an 'always' option whose name lacks the rule with the rule", function()
    local label = require("tether.questions").label
    assert.equals("Always allow — saves the rule Bash(ls:*)", label({ name = "Always allow", rule = "Bash(ls:*)" }))
    assert.equals("Always allow Bash(ls:*)", label({ name = "Always allow Bash(ls:*)", rule = "Bash(ls:*)" }))
  end)
end)
