-- First half of "resume a session in a fresh Neovim": run a turn in $TETHER_TEST_WORKSPACE
-- and leave the session id next to it. sessions_resume_spec.lua (another process) resumes it.
local H = require("helpers")

describe("sessions (first nvim)", function()
  -- No reset: quitting Neovim must stop the daemon cleanly (VimLeavePre), so that the
  -- fresh Neovim can resume the session right away.

  it("runs a turn worth resuming", function()
    local root = H.workspace(assert(vim.env.TETHER_TEST_WORKSPACE, "set TETHER_TEST_WORKSPACE"))
    H.setup(H.script(root, {
      { H.say("Noted: the word is pineapple."), H.tool("Read", { file_path = "src/app.py" }) },
      { H.say("I read the app too.") },
      { H.say("Forgotten.") },
    }, "first"))
    local s = H.session()
    assert.equals("end_turn", H.prompt(s, "Remember the word pineapple").stopReason)
    -- A second turn, rewound: the fresh Neovim shows it where it was, dimmed.
    local second = H.prompt(s, "And forget it")
    local done
    s:rewind(second.turnId, function()
      done = true
    end)
    H.wait(10000, function()
      return done
    end, "the rewind")
    H.write(root .. ".session", s.id)
  end)
end)
