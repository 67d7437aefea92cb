-- :TetherRewind: a rewound turn stays readable in the chat, dimmed and labelled (also in a
-- terminal without 'termguicolors'), a multi-line prompt rewinds like any other, the list
-- tells turns apart, and the mode the session is in survives the rewind and a restart.
local H = require("helpers")

local function edit(from, to)
  return H.tool("Edit", { file_path = "src/app.py", old_string = from, new_string = to })
end

describe(":TetherRewind", function()
  after_each(function()
    vim.o.termguicolors = true
    H.reset()
  end)

  it("rewinds a multi-line prompt, dims its turn, and the picker counts live turns", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      { H.tool("Read", { file_path = "src/app.py" }) },
      { edit('"Hello, "', '"Hi, "') },
      { H.say("first done") },
      { edit('"Bye, "', '"Ciao, "') },
      { H.say("second done") },
    }), { permission_mode = "acceptEdits", chat = { size = 64 } })
    local s = H.session()
    H.prompt(s, "first change")
    H.prompt(s, "second change\nin two lines")
    assert.equals(2, #s.state.turns)

    local labels, turns = {}, nil
    H.stub_select(function(items, opts)
      if opts.kind == "tether.session" then
        labels[#labels + 1] = opts.format_item(H.find(items, "sessionId", s.id))
        return nil
      end
      assert.equals("tether.turn", opts.kind)
      turns = vim.tbl_map(opts.format_item, items)
      return items[1] -- newest first: the two-line prompt
    end)
    vim.cmd("TetherSessions")
    H.wait(5000, function()
      return #labels == 1
    end, "the sessions picker")

    local done
    require("tether.pickers").rewind(s, function(restored)
      done = restored
    end)
    H.wait(10000, function()
      return done
    end, "the rewind to finish (its callback runs)")
    -- One line per turn, numbered: a multi-line prompt does not spill over lines.
    assert.same({ "2. second change  (+1 line)", "1. first change" }, turns)
    assert.same({ vim.uri_from_fname(root .. "/src/app.py") }, done)
    assert.matches('"Bye, "', H.read(root .. "/src/app.py"))
    assert.matches('"Hi, "', H.read(root .. "/src/app.py"))
    assert.same({ "first change" }, vim.tbl_map(function(t)
      return t.prompt
    end, s.state.turns))

    -- The second turn is still there to read: labelled in its own text, and dimmed.
    local chat = H.chat(s)
    local lines = vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)
    local text = table.concat(lines, "\n")
    assert.matches("## You (rewound)\n\nsecond change\nin two lines", text, 1, true)
    assert.matches("⤺ Rewound to before “second change…”: restored src/app.py.", text, 1, true)
    local marks = vim.api.nvim_buf_get_extmarks(chat.buf, require("tether.chat").ns, 0, -1, { details = true })
    local dimmed = {}
    for _, m in ipairs(marks) do
      if m[4].hl_group == "TetherRewound" then
        for row = m[2], m[4].end_row do
          dimmed[row + 1] = true
        end
      end
      assert.is_nil(m[4].virt_text, "labels are text, which wraps; virtual text would be cut")
    end
    for i, line in ipairs(lines) do
      if line == "second done" or line == "## You (rewound)" then
        assert.is_true(dimmed[i], line .. " is dimmed")
      elseif line == "first done" or line == "first change" then
        assert.is_nil(dimmed[i], line .. " is not dimmed")
      end
    end
    H.screen("chat-64-after-rewind")
    -- Without 'termguicolors' the dimming still shows: the group has a terminal colour.
    vim.o.termguicolors = false
    vim.cmd("doautocmd ColorScheme")
    local hl = vim.api.nvim_get_hl(0, { name = "TetherRewound", link = false })
    assert.is_not_nil(hl.ctermfg, "a terminal colour")

    vim.cmd("TetherSessions")
    H.wait(5000, function()
      return #labels == 2
    end, "the sessions picker again")
    assert.matches("  ·  2 turns  ·  ", labels[1], 1, true)
    assert.matches("  ·  1 turn  ·  ", labels[2], 1, true)
  end)

  it("keeps the mode the session is in, after the rewind and after a restart", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      { H.tool("ExitPlanMode", { plan = "1. Change the greeting" }) },
      { H.say("planned") },
    }), { permission_mode = "plan" })
    local s = H.session()
    local result
    H.send(s, "plan it", function(_, r)
      result = r
    end)
    H.wait(15000, function()
      return #s.state.questions == 1
    end, "the plan question")
    local win = H.chat(s):windows()[1]
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_feedkeys(vim.keycode("<LocalLeader>a"), "xt", false) -- start, asking before edits
    H.wait(10000, function()
      return result
    end, "the turn")
    assert.equals("default", s.state.mode)

    H.stub_select(function(items)
      return items[1]
    end)
    vim.cmd("TetherRewind")
    H.wait(10000, function()
      return #s.state.turns == 0
    end, "the rewind")
    assert.equals("default", s.state.mode, "a rewind does not change the mode")

    local again
    H.registry():restart(root, function(r)
      again = r
    end)
    H.wait(20000, function()
      return again
    end, "the restart")
    assert.equals("default", again.state.mode)
    assert.matches("ask before edits", vim.wo[H.chat(again):windows()[1]].winbar, 1, true)
    vim.cmd.wincmd("p")
  end)
end)
