local H = require("helpers")

local READ_APP = H.tool("Read", { file_path = "src/app.py" })
local EDIT_APP = H.tool("Edit", {
  file_path = "src/app.py",
  old_string = 'return "Hello, " + name',
  new_string = 'return "Hi, " + name',
})

--- Type like a user: keys through the input queue, so each command is its own undo step.
---@param keys string
local function type_keys(keys)
  vim.api.nvim_feedkeys(vim.keycode(keys), "xt", false)
end

describe("edits", function()
  after_each(H.reset)

  it("land in a modified buffer, keep the unsaved text, write the file, and undo with u", function()
    local root = H.workspace()
    local app = root .. "/src/app.py"
    H.setup(H.script(root, {
      { READ_APP },
      { expect = { contains = "typed by the user" }, blocks = { EDIT_APP } },
      { H.say("done") },
    }), { permission_mode = "acceptEdits" })
    vim.cmd.edit(app)
    local buf = vim.api.nvim_get_current_buf()
    type_keys("ggO# typed by the user, not saved<Esc>")
    local unsaved = H.text(buf)
    assert.is_true(vim.bo[buf].modified)

    local s = H.session()
    assert.equals("end_turn", H.prompt(s, "Say Hi instead of Hello").stopReason)

    local expected = unsaved:gsub('"Hello, "', '"Hi, "')
    assert.equals(expected, H.text(buf))
    assert.equals(expected .. "\n", H.read(app), "buffer and disk agree")
    assert.is_false(vim.bo[buf].modified, "the buffer was written")
    assert.matches("✓ Edit src/app.py", H.chat(s):contents(), 1, true)
    -- The chat says that the user's unsaved lines went to disk with the edit.
    local note = "💾 Saved src/app.py with the agent's edit: your unsaved changes in it were written too"
    assert.matches(note, H.chat(s):contents(), 1, true)

    -- `u` takes back the agent's edit, and only that.
    vim.cmd("normal! u")
    assert.equals(unsaved, H.text(buf))
    vim.cmd("normal! u")
    assert.equals(H.read(H.fixture .. "/src/app.py"), H.text(buf) .. "\n")
  end)

  it("use utf-8 offsets on lines with non-ASCII text", function()
    local root = H.workspace()
    local intl = root .. "/src/intl.txt"
    H.setup(H.script(root, {
      { H.tool("Read", { file_path = "src/intl.txt" }) },
      {
        H.tool("Edit", { file_path = "src/intl.txt", old_string = "😀 done", new_string = "😀 finished" }),
        H.tool("Edit", { file_path = "src/intl.txt", old_string = "pending ✅", new_string = "ready ✅" }),
      },
      { H.say("done") },
    }), { permission_mode = "acceptEdits" })
    vim.cmd.edit(intl)
    local buf = vim.api.nvim_get_current_buf()
    type_keys("ggA 👋<Esc>") -- unsaved, and on a line the agent leaves alone
    local s = H.session()
    H.prompt(s, "finish it")
    local want = { "title: 你好，世界 🌍 👋", "status: ready ✅", "note: naïve café 😀 finished" }
    assert.same(want, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    assert.equals(table.concat(want, "\n") .. "\n", H.read(intl))
  end)

  it("forward diagnostics of edited buffers to the agent", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      { READ_APP },
      { EDIT_APP },
      { expect = { contains = "undefined name 'Hi'" }, blocks = { H.say("I see the error.") } },
    }), { permission_mode = "acceptEdits" })
    vim.cmd.edit(root .. "/src/app.py")
    local buf = vim.api.nvim_get_current_buf()
    local ns = vim.api.nvim_create_namespace("fake-linter")
    -- A linter that reports on the buffer right after the agent's edit lands.
    local edits = require("tether.edits")
    local apply = edits.apply_edit
    edits.apply_edit = function(params, ctx)
      local result = apply(params, ctx)
      vim.schedule(function()
        vim.diagnostic.set(ns, buf, {
          {
            lnum = 1,
            col = 11,
            message = "undefined name 'Hi'",
            severity = vim.diagnostic.severity.ERROR,
            source = "fake",
          },
        })
      end)
      return result
    end
    local sent = {}
    local send = require("tether.diagnostics").send
    require("tether.diagnostics").send = function(client, b)
      sent[#sent + 1] = b
      return send(client, b)
    end
    local ok, err = pcall(function()
      local s = H.session()
      assert.equals("end_turn", H.prompt(s, "Say Hi").stopReason)
      assert.matches("I see the error.", H.chat(s):contents(), 1, true)
    end)
    edits.apply_edit = apply
    require("tether.diagnostics").send = send
    assert(ok, err)
    assert.is_true(#sent >= 2, "the baseline at the edit, then the linter's report")
    assert.equals(buf, sent[#sent])
  end)

  it("against an older buffer version are refused, not skipped with applied = true", function()
    local root = H.workspace()
    H.setup(H.script(root, {}))
    vim.cmd.edit(root .. "/src/app.py")
    local buf = vim.api.nvim_get_current_buf()
    local s = H.session()
    local read_version = vim.lsp.util.buf_versions[buf]
    type_keys("Go# typed after the agent read the file<Esc>")
    local typed = H.text(buf)
    local function edit(version)
      return require("tether.edits").apply_edit({
        label = "Edit src/app.py",
        edit = {
          documentChanges = {
            {
              textDocument = { uri = vim.uri_from_bufnr(buf), version = version },
              edits = {
                {
                  range = { start = { line = 0, character = 4 }, ["end"] = { line = 0, character = 9 } },
                  newText = "hello",
                },
              },
            },
          },
        },
      }, { client_id = s.client_id, method = "workspace/applyEdit" })
    end
    assert.same({ applied = false, failureReason = "the buffer changed since the agent read it" }, edit(read_version))
    assert.equals(typed, H.text(buf))
    assert.same({ applied = true }, edit(vim.lsp.util.buf_versions[buf]))
    assert.equals("def hello(name: str) -> str:", vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1])
  end)

  it("survive the user typing while the agent works", function()
    local root = H.workspace()
    local app = root .. "/src/app.py"
    H.setup(H.script(root, {
      { READ_APP },
      { chunk_delay_ms = 150, blocks = { EDIT_APP } },
      { H.say("ok") },
    }), { permission_mode = "acceptEdits" })
    vim.cmd.edit(app)
    local buf = vim.api.nvim_get_current_buf()
    local typed = false
    local function on_event(_, event)
      local u = event.type == "changed" and event.action.type == "update" and event.action.update
      if u and u.kind == "tool_call_update" and u.status == "completed" and not typed then
        -- The user types right after the agent has read the file.
        typed = true
        vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "# typed while the agent thinks" })
      end
    end
    -- Every answer to applyEdit, to see which path the edit took.
    local edits = require("tether.edits")
    local apply = edits.apply_edit
    local answers = {}
    edits.apply_edit = function(params, ctx)
      local result = apply(params, ctx)
      answers[#answers + 1] = result.applied
      return result
    end
    local ok, err = pcall(function()
      local s = H.session()
      s:subscribe(on_event)
      assert.equals("end_turn", H.prompt(s, "Say Hi").stopReason)
    end)
    edits.apply_edit = apply
    assert(ok, err)
    -- Refused first when the daemon had not seen the typing yet, applied after it re-read.
    assert.is_true(answers[#answers])
    local text = H.text(buf)
    assert.matches("# typed while the agent thinks", text, 1, true)
    assert.matches('"Hi, "', text, 1, true)
    assert.equals(text .. "\n", H.read(app))
  end)

  it("say nothing about saving when the buffer had no unsaved changes", function()
    local root = H.workspace()
    H.setup(H.script(root, { { READ_APP }, { EDIT_APP }, { H.say("done") } }), { permission_mode = "acceptEdits" })
    vim.cmd.edit(root .. "/src/app.py")
    local s = H.session()
    assert.equals("end_turn", H.prompt(s, "Say Hi").stopReason)
    assert.matches('"Hi, "', H.read(root .. "/src/app.py"))
    assert.is_nil(H.chat(s):contents():find("💾", 1, true))
  end)

  it("create new files through the editor and write them", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      { H.tool("Write", { file_path = "docs/notes.md", content = "# Notes\n\nnaïve café ✅\n" }) },
      { H.say("written") },
    }), { permission_mode = "acceptEdits" })
    local s = H.session()
    H.prompt(s, "write notes")
    local path = root .. "/docs/notes.md"
    assert.equals("# Notes\n\nnaïve café ✅\n", H.read(path))
    local buf = vim.fn.bufnr(path)
    assert.is_true(buf > 0 and vim.api.nvim_buf_is_loaded(buf), "the file went through a buffer")
    assert.is_false(vim.bo[buf].modified)
    assert.same({ "# Notes", "", "naïve café ✅" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
  end)

  it("are put back by :TetherRewind, buffer and file", function()
    local root = H.workspace()
    local app = root .. "/src/app.py"
    local before = H.read(app)
    H.setup(H.script(root, {
      { READ_APP },
      { EDIT_APP },
      { H.say("done") },
    }), { permission_mode = "acceptEdits" })
    vim.cmd.edit(app)
    local buf = vim.api.nvim_get_current_buf()
    local s = H.session()
    H.prompt(s, "Say Hi")
    assert.matches('"Hi, "', H.read(app))

    local calls = H.stub_select(function(items, opts)
      assert.equals("tether.turn", opts.kind)
      return items[1]
    end)
    vim.cmd("TetherRewind")
    H.wait(10000, function()
      return #s.state.turns == 0 and s.state.busy == 0
    end, "the rewind")
    assert.equals("1. Say Hi", calls[1].opts.format_item(calls[1].items[1]))
    H.wait(5000, function()
      return H.read(app) == before
    end, "the file to be restored")
    assert.equals(before, H.text(buf) .. "\n")
    assert.matches("⤺ Rewound to before “Say Hi”: restored src/app.py.", H.chat(s):contents(), 1, true)
  end)
end)
