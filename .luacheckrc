-- luacheck for migrun's policy library: Lua 5.4 as migrun's sandbox has it (see the README's
-- "Lua scripts: the sandbox"), and the globals migrun gives every script (policies/types).
std = "lua54"
-- Not in the sandbox: files, processes, the debug library, loading code.
not_globals = { "io", "debug", "load", "loadfile", "dofile", "package", "os" }
read_globals = {
  -- what the sandbox keeps of os
  os = { fields = { "time", "clock", "date" } },
  -- migrun's: NULL and the helper modules
  "NULL", "json", "base64", "hex", "uuid", "date", "plist",
}
-- `migrun test` files also have the test API.
files["**/*_test.lua"] = { read_globals = { "test", "expect", "expect_error", "migrate" } }
-- Type definitions for the language server: declarations, never run.
exclude_files = { "policies/types/**" }
