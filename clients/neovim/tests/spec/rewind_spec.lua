-- A rewound turn stays readable in the chat but is marked as rewound, and the sessions
-- picker counts only the turns that are still live.
local H = require("helpers")

local function edit(from, to)
  return H.tool("Edit", { file_path = "src/app.py", old_string = from, new_string = to })
end

describe(":TetherRewind", function()
  after_each(H.reset)

  it("marks the rewound turn in the chat, and the picker counts live turns", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      { H.tool("Read", { file_path = "src/app.py" }) },
      { edit('"Hello, "', '"Hi, "') },
      { H.say("first done") },
      { edit('"Bye, "', '"Ciao, "') },
      { H.say("second done") },
    }), { permission_mode = "acceptEdits" })
    local s = H.session()
    H.prompt(s, "first change")
    H.prompt(s, "second change")
    assert.equals(2, #s.turns)

    local labels = {}
    H.stub_select(function(items, opts)
      if opts.kind == "tether.session" then
        labels[#labels + 1] = opts.format_item(H.find(items, "sessionId", s.id))
        return nil
      end
      assert.equals("tether.turn", opts.kind)
      return items[1] -- newest first: "second change"
    end)
    vim.cmd("TetherSessions")
    H.wait(5000, function()
      return #labels == 1
    end, "the sessions picker")

    vim.cmd("TetherRewind")
    H.wait(10000, function()
      return #s.turns == 1
    end, "the rewind")
    assert.matches('"Bye, "', H.read(root .. "/src/app.py"))
    assert.matches('"Hi, "', H.read(root .. "/src/app.py"))

    -- The second turn is still there to read, dimmed and labelled; the first is not.
    local marks = vim.api.nvim_buf_get_extmarks(s.chat.buf, require("tether.chat").ns, 0, -1, { details = true })
    local dimmed, label
    for _, m in ipairs(marks) do
      if m[4].hl_group == "TetherRewound" then
        dimmed = { first = m[2], last = m[4].end_row }
      end
      if m[4].virt_text then
        label = { row = m[2], text = m[4].virt_text[1][1] }
      end
    end
    local lines = vim.api.nvim_buf_get_lines(s.chat.buf, 0, -1, false)
    assert.is_not_nil(dimmed, "the rewound turn is dimmed")
    assert.equals("## You", lines[dimmed.first + 1])
    assert.equals("second change", lines[dimmed.first + 3])
    assert.matches("second done", table.concat(lines, "\n", dimmed.first + 1, dimmed.last + 1), 1, true)
    assert.matches("first done", table.concat(lines, "\n", 1, dimmed.first), 1, true)
    assert.equals(dimmed.first, label.row)
    assert.matches("^⤺ rewound", label.text)
    assert.same({ "first change" }, vim.tbl_map(function(t)
      return t.prompt
    end, s.turns))
    assert.equals(1, #s.chat:rewound_turns())

    vim.cmd("TetherSessions")
    H.wait(5000, function()
      return #labels == 2
    end, "the sessions picker again")
    assert.matches("  ·  2 turns  ·  ", labels[1], 1, true)
    assert.matches("  ·  1 turn  ·  ", labels[2], 1, true)
  end)
end)
