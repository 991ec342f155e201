/// The Lua side of `migrun test`: `test`, `expect(…)`, `expect_error`, deep comparison with a
/// readable diff. The prelude is a chunk of its own (``source``), returning the runner the host calls
/// once per test and the API; the test file is another (``chunk(wrapping:)``), a function of that API,
/// so nothing in the file can reach the runner or its list of tests (a file that replaced them could
/// report a failing test as passed, or hand the host a count it cannot run).
enum TestPrelude {
  /// The test file as a function of the API, on the file's first line (its lines keep their numbers).
  static func chunk(wrapping test: String) -> String {
    "return function(test, expect, expect_error, ...) " + test + "\nend"
  }

  static let source = #"""
    local NULL, type, pairs, tostring, error, pcall, select = NULL, type, pairs, tostring, error, pcall, select
    local mtype, sort, concat, format = math.type, table.sort, table.concat, string.format
    local tests = {}

    local test, expect, expect_error
    test = function(name, body)
      if type(name) ~= "string" or type(body) ~= "function" then
        error("test(name, function) expects a name and a function", 2)
      end
      tests[#tests + 1] = { name = name, body = body }
    end

    local function show(value)
      if value == NULL then return "NULL" end
      local kind = type(value)
      if kind == "string" then
        if value:find("[%z\1-\8\11\12\14-\31\127-\255]") then
          return format("<%d bytes %s>", #value, (value:sub(1, 24):gsub(".", function(c) return format("%02x", c:byte()) end)))
        end
        return format("%q", value)
      end
      if kind == "number" then
        if mtype(value) == "integer" then return tostring(value) end
        local text = format("%.17g", value)
        if not text:find("[%.eni]") then text = text .. ".0" end
        return text .. " (float)"
      end
      if kind == "table" then
        local keys = {}
        for key in pairs(value) do keys[#keys + 1] = key end
        sort(keys, function(a, b) return tostring(a) < tostring(b) end)
        local parts = {}
        for index, key in ipairs(keys) do
          if index > 8 then parts[#parts + 1] = "…"; break end
          parts[#parts + 1] = (type(key) == "string" and key or "[" .. tostring(key) .. "]") .. " = " .. show(value[key])
        end
        return "{ " .. concat(parts, ", ") .. " }"
      end
      return tostring(value)
    end

    -- Differences between `actual` and `expected`, one line each, with the path to each; `partial`:
    -- keys of `actual` that `expected` does not name are not differences (at every depth).
    local function compare(actual, expected, path, out, partial)
      if #out >= 20 then return end
      if actual == NULL or expected == NULL or type(actual) ~= "table" or type(expected) ~= "table" then
        local same = actual == expected
        if same and type(actual) == "number" and mtype(actual) ~= mtype(expected) then same = false end
        if not same then
          out[#out + 1] = format("%s: expected %s, got %s", path, show(expected), show(actual))
        end
        return
      end
      local keys, seen = {}, {}
      for key in pairs(expected) do keys[#keys + 1] = key; seen[key] = true end
      for key in pairs(actual) do if not seen[key] then keys[#keys + 1] = key end end
      sort(keys, function(a, b) return tostring(a) < tostring(b) end)
      for _, key in ipairs(keys) do
        local where = path .. (type(key) == "number" and "[" .. key .. "]" or "." .. tostring(key))
        if expected[key] == nil then
          if not partial then out[#out + 1] = format("%s: not expected, got %s", where, show(actual[key])) end
        elseif actual[key] == nil then
          out[#out + 1] = format("%s: expected %s, missing", where, show(expected[key]))
        else
          compare(actual[key], expected[key], where, out, partial)
        end
      end
    end

    local Expectation = {}
    Expectation.__index = Expectation

    local function fail(message) error(message, 3) end

    function Expectation:equals(expected)
      local out = {}
      compare(self.value, expected, "value", out)
      if #out > 0 then fail("not equal:\n    " .. concat(out, "\n    ")) end
      return self
    end
    -- The fields `expected` names, at every depth; others may be anything (one field of an object
    -- compared without listing the rest).
    function Expectation:includes(expected)
      local out = {}
      compare(self.value, expected, "value", out, true)
      if #out > 0 then fail("not included:\n    " .. concat(out, "\n    ")) end
      return self
    end
    function Expectation:near(expected, tolerance)
      tolerance = tolerance or 1e-9
      if type(self.value) ~= "number" or math.abs(self.value - expected) > tolerance then
        fail(format("expected %s within %s, got %s", show(expected), show(tolerance), show(self.value)))
      end
      return self
    end
    local function is(self, expected, label)
      if self.value ~= expected then fail("expected " .. label .. ", got " .. show(self.value)) end
      return self
    end
    function Expectation:is_null() return is(self, NULL, "NULL") end
    function Expectation:is_true() return is(self, true, "true") end
    function Expectation:is_false() return is(self, false, "false") end
    function Expectation:matches(pattern)
      if type(self.value) ~= "string" or not self.value:find(pattern) then
        fail(format("expected a string matching %q, got %s", pattern, show(self.value)))
      end
      return self
    end
    function Expectation:has_length(count)
      local length = (type(self.value) == "table" or type(self.value) == "string") and #self.value or nil
      if length ~= count then fail(format("expected length %d, got %s", count, tostring(length))) end
      return self
    end

    expect = function(value) return setmetatable({ value = value }, Expectation) end

    expect_error = function(body, pattern)
      local ok, message = pcall(body)
      if ok then error("expected an error" .. (pattern and (" matching " .. format("%q", pattern)) or "") .. ", none was raised", 2) end
      message = tostring(message)
      if pattern and not message:find(pattern) then
        error(format("expected an error matching %q, got: %s", pattern, message), 2)
      end
      return message
    end

    local function handler(message)
      return tostring(message)
    end

    -- The host's runner: the tests' names, and running test `index` → name, ok, message.
    local runner = function(index)
      if index == nil then
        local names = {}
        for i, entry in ipairs(tests) do names[i] = entry.name end
        return names
      end
      local entry = tests[index]
      if entry == nil then return "test " .. tostring(index), false, "no such test" end
      local ok, message = xpcall(entry.body, handler)
      return tostring(entry.name), ok == true, message ~= nil and tostring(message) or nil
    end
    return runner, test, expect, expect_error
    """#
}
