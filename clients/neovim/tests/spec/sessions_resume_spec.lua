-- Second half of "resume a session in a fresh Neovim" (see sessions_first_spec.lua).
local H = require("helpers")

describe("sessions (fresh nvim)", function()
  after_each(H.reset)

  it("lists the earlier session, resumes it with its history, and continues it", function()
    local root = H.workspace(assert(vim.env.TETHER_TEST_WORKSPACE, "set TETHER_TEST_WORKSPACE"))
    local id = H.read(root .. ".session")
    H.setup(H.script(root, {
      { expect = { contains = "what was the word" }, blocks = { H.say("It was pineapple.") } },
    }, "resume"))
    local calls = H.stub_select(function(items, opts)
      assert.equals("tether.session", opts.kind)
      return H.find(items, "sessionId", id)
    end)
    vim.cmd("TetherSessions")
    H.wait(15000, function()
      return H.registry():current_of(root) ~= nil
    end, "the session to be resumed")

    local s = assert(H.registry():current_of(root))
    assert.equals(id, s.id)
    assert.equals(1, #calls[1].items)
    local label = calls[1].opts.format_item(calls[1].items[1])
    assert.matches("^Remember the word pineapple  ·  1 turn  ·  %d%d%d%d%-", label)
    local chat = H.chat(s):contents()
    assert.matches("## You\n\nRemember the word pineapple", chat, 1, true)
    assert.matches("Noted: the word is pineapple.", chat, 1, true)
    assert.matches("✓ Read src/app.py", chat, 1, true)
    assert.matches("I read the app too.", chat, 1, true)
    -- The rewound turn comes back where it was (after the first, before what follows),
    -- labelled and dimmed, as it was after the rewind live.
    local rewound_at = chat:find("## You (rewound)\n\nAnd forget it", 1, true)
    assert.is_not_nil(rewound_at, chat)
    assert.is_true(rewound_at > chat:find("I read the app too.", 1, true))
    assert.matches("⤺ Rewound to before “And forget it”: no files needed restoring.", chat, 1, true)
    local buf = H.chat(s).buf
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    local dimmed = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, require("tether.chat").ns, 0, -1, { details = true })) do
      if m[4].hl_group == "TetherRewound" then
        for row = m[2], m[4].end_row do
          dimmed[row + 1] = true
        end
      end
    end
    for i, line in ipairs(lines) do
      if line == "Forgotten." or line == "And forget it" then
        assert.is_true(dimmed[i], line .. " is dimmed")
      elseif line == "I read the app too." or line == "Remember the word pineapple" then
        assert.is_nil(dimmed[i], line .. " is not dimmed")
      end
    end
    assert.same({ "Remember the word pineapple" }, vim.tbl_map(function(t)
      return t.prompt
    end, s.state.turns))
    assert.is_not_nil(H.chat(s):windows()[1], "the chat is shown")
    -- The session's usage so far comes back with it (the winbar's tokens and cost).
    local before = assert(require("tether.status").totals(s.state))
    assert.is_true(before.inputTokens > 0 and before.outputTokens > 0)

    assert.equals("end_turn", H.prompt(s, "So, what was the word?").stopReason)
    local after = H.chat(s):contents()
    assert.is_true(after:find("It was pineapple.", 1, true) > after:find("And forget it", 1, true))
    assert.equals(2, #s.state.turns)
    assert.is_true(require("tether.status").totals(s.state).inputTokens > before.inputTokens)
  end)
end)
