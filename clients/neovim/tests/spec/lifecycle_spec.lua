local H = require("helpers")

describe("cancel", function()
  after_each(H.reset)

  it("stops a streaming turn and the session stays usable", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      { chunk_delay_ms = 100, blocks = { H.say(("slowly "):rep(60)) } },
      { H.say("after the cancel") },
    }))
    local s = H.session()
    local result
    H.send(s, "talk", function(_, r)
      result = r
    end)
    H.wait(10000, function()
      return H.chat(s):contents():find("slowly", 1, true)
    end, "the first chunk")
    assert.equals(1, s.state.busy)
    assert.matches("working", vim.wo[H.chat(s):windows()[1]].winbar)

    local started = vim.uv.hrtime()
    vim.cmd("TetherCancel")
    H.wait(5000, function()
      return result
    end, "the cancelled turn to end")
    assert.is_true((vim.uv.hrtime() - started) / 1e6 < 2000, "the cancel is prompt")
    assert.equals("cancelled", result.stopReason)
    assert.equals(0, s.state.busy)
    assert.matches("_Cancelled._", H.chat(s):contents(), 1, true)
    assert.is_nil(vim.wo[H.chat(s):windows()[1]].winbar:find("working"))
    local partial = select(2, H.chat(s):contents():gsub("slowly", ""))
    assert.is_true(partial < 60, "the reply was cut short")

    assert.equals("end_turn", H.prompt(s, "again").stopReason)
    assert.matches("after the cancel", H.chat(s):contents(), 1, true)
  end)

  it("answers a waiting question 'cancelled' when Neovim quits, so nothing waits for it", function()
    local root = H.workspace()
    H.setup(H.script(root, { { H.tool("Bash", { command = "echo ran > out.txt" }) }, { H.say("ok") } }))
    local s = H.session()
    local daemon = require("tether.daemon")
    H.send(s, "write the file")
    H.wait(15000, function()
      return #s.state.questions == 1
    end, "the question")
    assert.is_not_nil(next(daemon.pending), "the request waits for its answer")
    local client = assert(vim.lsp.get_clients({ name = "tether" })[1])
    local more = vim.o.more
    vim.api.nvim_exec_autocmds("VimLeavePre", {})
    local after = { more = vim.o.more, pending = next(daemon.pending), stopped = client:is_stopped() }
    daemon.exiting, vim.o.more = false, more
    assert.is_nil(after.pending, "answered")
    assert.is_false(after.more, "no -- More -- prompt can block the exit")
    assert.is_true(after.stopped, "the daemon stopped within the wait")
    assert.is_nil(vim.uv.fs_stat(root .. "/out.txt"), "the command did not run")
  end)

  it("says so when nothing runs", function()
    local root = H.workspace()
    H.setup(H.script(root, {}))
    local s = H.session()
    local messages = {}
    local notify = vim.notify
    vim.notify = function(msg)
      messages[#messages + 1] = msg
    end
    vim.cmd("TetherCancel")
    H.wait(1000, function()
      return #messages > 0
    end, "a message")
    vim.notify = notify
    assert.matches("no turn is running", messages[1], 1, true)
    assert.equals(0, s.state.busy)
  end)
end)

describe("daemon lifecycle", function()
  after_each(H.reset)

  it("notices a daemon that died, and the next prompt starts a new one", function()
    local root = H.workspace()
    H.setup(H.script(root, { { H.say("answer") } }))
    local registry = H.registry()
    local s = H.session()
    H.prompt(s, "one")
    local old_buf = H.chat(s).buf
    vim.lsp.get_client_by_id(s.client_id).rpc.terminate()
    H.wait(5000, function()
      return H.chat(s):contents():find("The daemon exited", 1, true)
    end, "the exit to be noticed")
    local note = "The daemon exited (signal 15); :TetherSessions resumes this session."
    assert.matches(note, H.chat(s):contents(), 1, true)
    assert.is_nil(registry:current_of(root))

    vim.cmd("TetherPrompt two")
    H.wait(15000, function()
      local again = registry:current_of(root)
      return again and #again.state.turns == 1 and again.state.busy == 0
    end, "a new daemon and session to answer")
    local again = assert(registry:current_of(root))
    assert.are_not.equal(s.id, again.id)
    -- The new session's chat took over the old chat's windows instead of opening others,
    -- and the old session was let go: its buffers are gone.
    assert.is_nil(require("tether.chat").of(s))
    assert.is_nil(registry.sessions[s.id])
    assert.is_false(vim.api.nvim_buf_is_valid(old_buf))
    assert.equals(1, #H.chat(again):windows())
    assert.equals(3, #vim.api.nvim_list_wins(), "the file, the chat and its prompt area")
  end)

  it("resumes a session whose daemon exited in the same chat, and lets go of a wiped one", function()
    local root = H.workspace()
    H.setup(H.script(root, { { H.say("one") }, { H.say("two") } }))
    local s = H.session()
    H.prompt(s, "first")
    local chat = H.chat(s)
    vim.lsp.get_client_by_id(s.client_id).rpc.terminate()
    H.wait(5000, function()
      return not s.state.attached
    end, "the exit to be noticed")
    H.stub_select(function(items)
      return H.find(items, "sessionId", s.id)
    end)
    vim.cmd("TetherSessions")
    H.wait(15000, function()
      return H.registry():current_of(root) == s
    end, "the session to be resumed")
    assert.equals(chat, H.chat(s), "the same chat")
    assert.equals(1, #vim.tbl_filter(function(buf)
      return vim.b[buf].tether_role == "chat"
    end, vim.api.nvim_list_bufs()), "one chat buffer")
    assert.matches("first\n\n## Tether\n\none", chat:contents(), 1, true)
    assert.matches("Session resumed in a new daemon.", chat:contents(), 1, true)
    assert.equals("end_turn", H.prompt(s, "second").stopReason)

    -- Wiping the chat lets go of the session and its other buffers.
    local bufs = { chat.buf, chat.input.buf, chat.plan_buf }
    vim.cmd.bwipeout({ args = { chat.buf }, bang = true })
    H.wait(2000, function()
      return H.registry().sessions[s.id] == nil
    end, "the session to be let go")
    for _, buf in ipairs(bufs) do
      assert.is_false(vim.api.nvim_buf_is_valid(buf))
    end
    assert.is_nil(H.registry():current_of(root))
  end)

  it("installs a missing daemon on first use, saying so, then starts it", function()
    local root = H.workspace()
    local real = vim.fn.exepath("tether")
    assert.is_true(real ~= "", "the test needs the daemon to hand to the installer")
    -- An installer standing in for uv: it reports progress on stderr, then puts `tether`
    -- where `uv tool install` does.
    local fake = vim.fn.tempname()
    local bin = fake .. "/tools"
    vim.fn.mkdir(fake .. "/bin", "p")
    vim.fn.mkdir(bin, "p")
    H.write(fake .. "/bin/uv", table.concat({
      "#!/bin/sh",
      'echo "$@" > "' .. fake .. '/args"',
      "echo 'Resolved 42 packages' >&2",
      'ln -s "' .. real .. '" "' .. bin .. '/tether"',
    }, "\n") .. "\n")
    vim.uv.fs_chmod(fake .. "/bin/uv", 493) -- 0755
    local saved = { PATH = vim.env.PATH, HOME = vim.env.HOME, UV_TOOL_BIN_DIR = vim.env.UV_TOOL_BIN_DIR }
    vim.env.PATH = fake .. "/bin:/usr/bin:/bin"
    vim.env.HOME = fake
    vim.env.UV_TOOL_BIN_DIR = bin
    local messages = {}
    local notify = vim.notify
    vim.notify = function(msg)
      messages[#messages + 1] = msg
    end
    local ok, err = pcall(function()
      H.setup(H.script(root, { { H.say("installed and answering") } }), { cmd = { "tether", "serve" } })
      vim.cmd("TetherPrompt hello")
      H.wait(30000, function()
        local s = H.registry():current_of(root)
        return s and #s.state.turns == 1 and s.state.busy == 0
      end, "the installed daemon to answer")
    end)
    vim.notify = notify
    for k, v in pairs(saved) do
      vim.env[k] = v
    end
    assert(ok, err)
    local all = table.concat(messages, "\n")
    assert.matches("the Tether daemon is not installed: installing it (uv tool install --force", all, 1, true)
    assert.matches("installing the daemon: Resolved 42 packages", all, 1, true)
    assert.matches("daemon installed: " .. bin .. "/tether; starting it", all, 1, true)
    local repo = vim.fs.normalize(vim.fn.fnamemodify(H.here .. "/../../..", ":p")):gsub("/$", "")
    assert.equals("tool install --force " .. repo, vim.trim(H.read(fake .. "/args")))
    local s = assert(H.registry():current_of(root))
    assert.matches("installed and answering", H.chat(s):contents(), 1, true)
  end)

  it("reports a daemon that cannot start, every time it is asked", function()
    H.workspace()
    local messages = {}
    local notify = vim.notify
    vim.notify = function(msg)
      messages[#messages + 1] = msg
    end
    local function reported(text, times)
      H.wait(5000, function()
        local n = 0
        for _, msg in ipairs(messages) do
          n = n + (msg:find(text, 1, true) and 1 or 0)
        end
        return n >= times
      end, ("%q reported %d times"):format(text, times))
    end
    local ok, err = pcall(function()
      require("tether").setup({ cmd = { "false" } }) -- starts, and exits at once
      vim.cmd("TetherPrompt hi")
      reported("the daemon exited during start-up (code 1)", 1)
      vim.cmd("TetherPrompt again") -- not stuck behind the first attempt
      reported("the daemon exited during start-up (code 1)", 2)
      require("tether").setup({ cmd = { "/nonexistent/tether" } })
      vim.cmd("TetherPrompt once more")
      reported('"/nonexistent/tether" is not executable', 1)
    end)
    vim.notify = notify
    assert(ok, err)
  end)
end)

describe(":TetherRestart", function()
  local server
  after_each(function()
    if server then
      server:kill("sigterm")
      server:wait(5000)
      server = nil
    end
    for _, var in ipairs({ "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL" }) do
      vim.env[var] = nil
    end
    H.reset()
  end)

  it("brings up a daemon with Neovim's new environment and continues the session", function()
    local root = H.workspace()
    -- The fake Messages API, as the real SDK in the daemon talks to it.
    local script = root .. ".api.json"
    H.write(script, vim.json.encode({
      { expect = { contains = "try again" }, blocks = { H.say("Now I can answer.") } },
    }))
    local port_file = root .. ".port"
    local python = vim.fs.joinpath(vim.fs.dirname(vim.fn.exepath("tether")), "python")
    server = vim.system({ python, "-m", "tether.testing.fake_anthropic", "--script", script, "--port-file", port_file })
    H.wait(15000, function()
      return vim.uv.fs_stat(port_file) ~= nil
    end, "the fake Messages API")
    local port = vim.trim(H.read(port_file))

    require("tether").setup({}) -- no model: the daemon needs ANTHROPIC_API_KEY
    local messages = {}
    local notify = vim.notify
    vim.notify = function(msg)
      messages[#messages + 1] = msg
    end
    vim.cmd("Tether")
    H.wait(15000, function()
      return #messages > 0
    end, "the error")
    vim.notify = notify
    -- Said for a Neovim user: how to set the key here, and what then; no command-line flags.
    assert.matches("no model is configured", messages[1], 1, true)
    assert.matches(":let $ANTHROPIC_API_KEY = '…', then :TetherRestart", messages[1], 1, true)
    assert.matches("setup({ model = ", messages[1], 1, true)
    assert.is_nil(messages[1]:find("--model", 1, true))
    assert.is_nil(messages[1]:find("tether demo", 1, true))
    local old = assert(require("tether.daemon").get(root))

    -- The user fixes the environment inside Neovim and restarts the daemon.
    vim.env.ANTHROPIC_API_KEY = "sk-test-restart"
    vim.env.ANTHROPIC_BASE_URL = "http://127.0.0.1:" .. port
    vim.cmd("TetherRestart")
    H.wait(20000, function()
      local c = require("tether.daemon").get(root)
      return c and c.id ~= old.id and c.initialized
    end, "a new daemon")
    assert.is_true(old:is_stopped())
    local s = H.session()
    local second = H.prompt(s, "try again", 20000)
    assert.equals("end_turn", second.stopReason)
    assert.matches("Now I can answer.", H.chat(s):contents(), 1, true)
  end)

  it("continues the current session in the new daemon, in the same chat", function()
    local root = H.workspace()
    H.setup(H.script(root, { { H.say("one") }, { H.say("two") } }))
    local s = H.session()
    H.prompt(s, "first")
    local old_client = s.client_id
    local restarted
    H.registry():restart(root, function(again)
      restarted = again
    end)
    H.wait(20000, function()
      return restarted ~= nil
    end, "the restart")
    assert.equals(s, restarted)
    assert.are_not.equal(old_client, s.client_id)
    assert.matches("Daemon restarted; the session continues.", H.chat(s):contents(), 1, true)
    assert.is_nil(H.chat(s):contents():find("The daemon exited", 1, true), "a restart is not a crash")
  end)
end)
