import MigrunScripting

/// `swift.lua`, the module every ported file requires: what Swift's standard library and Foundation
/// do that Lua has no one call for, with Swift's behaviour (`nil` and `NULL` both absent, arrays
/// from 1 in Lua but counted as Swift counts them). Written beside the ported files; its test is
/// `port_test.lua`.
enum PortRuntime {
  static let fileName = "swift.lua"

  static let module = #"""
    -- swift.lua: the Swift standard library and Foundation calls `migrun port` translates to, for
    -- the ported policies and stages of this folder. nil and NULL both read as Swift's nil.
    local swift = {}

    local function absent(v) return v == nil or v == NULL end
    swift.absent = absent

    -- a ?? b
    function swift.coalesce(v, default) if absent(v) then return default end return v end
    -- a?.b…: f(a), or nil when a is nil or NULL
    function swift.opt(v, f) if absent(v) then return nil end return f(v) end
    -- try? e
    function swift.attempt(f) local ok, v = pcall(f) if ok then return v end return nil end
    -- A stored property `migrun port` did not translate: fails where it is used, with its message.
    function swift.placeholder(message)
      local function fail() error(message, 2) end
      return setmetatable({}, {
        __index = fail, __newindex = fail, __call = fail, __len = fail, __concat = fail, __add = fail,
        __sub = fail, __mul = fail, __div = fail, __lt = fail, __le = fail, __eq = fail, __tostring = fail,
      })
    end
    -- print() where no manager or context logs
    function swift.log() end

    -- "\(v)", String(describing:)
    function swift.str(v)
      if absent(v) then return "nil" end
      return tostring(v)
    end
    -- String(data:encoding: .utf8): nil for bytes that are not UTF-8
    function swift.utf8(v) if absent(v) or not utf8.len(v) then return nil end return v end
    -- Int(x): a string's integer (nil for another text), a number truncated toward zero
    function swift.int(v)
      if absent(v) then return nil end
      if type(v) == "boolean" then return v and 1 or 0 end
      if type(v) == "string" then
        local n = tonumber(v)
        if n == nil or math.type(n) ~= "integer" then return nil end
        return n
      end
      if math.type(v) == "float" then return math.tointeger(v >= 0 and math.floor(v) or math.ceil(v)) end
      return v
    end
    -- Double(x)
    function swift.double(v)
      if absent(v) then return nil end
      if type(v) == "string" then local n = tonumber(v) return n and n + 0.0 end
      if type(v) == "boolean" then return v and 1.0 or 0.0 end
      return v + 0.0
    end
    function swift.bool(v)
      if absent(v) then return nil end
      if type(v) == "number" then return v ~= 0 end
      if type(v) == "string" then return v == "true" or v == "1" end
      return v
    end
    -- Int division truncates toward zero (Lua's // floors)
    function swift.idiv(a, b)
      local q = a // b
      if q < 0 and q * b ~= a then q = q + 1 end
      return q
    end
    function swift.round(v) if v >= 0 then return math.floor(v + 0.5) + 0.0 end return math.ceil(v - 0.5) + 0.0 end
    function swift.floor(v) return math.floor(v) + 0.0 end
    function swift.ceil(v) return math.ceil(v) + 0.0 end
    -- + on values whose kind the translation did not know
    function swift.plus(a, b)
      if type(a) == "string" or type(b) == "string" then return a .. b end
      return a + b
    end

    -- Strings
    function swift.split(s, separator)
      local parts, start = {}, 1
      if separator == "" then return { s } end
      while true do
        local i, j = string.find(s, separator, start, true)
        if not i then parts[#parts + 1] = string.sub(s, start) return parts end
        parts[#parts + 1] = string.sub(s, start, i - 1)
        start = j + 1
      end
    end
    function swift.splitOmitting(s, separator)
      local parts = {}
      for _, part in ipairs(swift.split(s, separator)) do
        if part ~= "" then parts[#parts + 1] = part end
      end
      return parts
    end
    function swift.splitSpaces(s)
      local parts = {}
      for part in string.gmatch(s, "%S+") do parts[#parts + 1] = part end
      return parts
    end
    function swift.trim(s) return (string.gsub(string.gsub(s, "^%s+", ""), "%s+$", "")) end
    function swift.hasPrefix(s, p) return string.sub(s, 1, #p) == p end
    function swift.hasSuffix(s, p) return p == "" or string.sub(s, -#p) == p end
    function swift.replace(s, a, b) return table.concat(swift.split(s, a), b) end
    function swift.capitalized(s)
      return (string.gsub(s, "(%a)(%w*)", function(a, rest) return string.upper(a) .. string.lower(rest) end))
    end
    function swift.containsIgnoringCase(s, part)
      return string.find(string.lower(s), string.lower(part), 1, true) ~= nil
    end

    -- Collections (strings too, where Swift's call takes both)
    function swift.count(v)
      if type(v) == "string" then return utf8.len(v) or #v end
      local n = 0
      for _ in pairs(v) do n = n + 1 end
      return n
    end
    function swift.isEmpty(v)
      if type(v) == "string" then return v == "" end
      return next(v) == nil
    end
    local function characters(s)
      local list = {}
      for _, code in utf8.codes(s) do list[#list + 1] = utf8.char(code) end
      return list
    end
    function swift.first(v)
      if type(v) == "string" then return characters(v)[1] end
      return v[1]
    end
    function swift.last(v)
      if type(v) == "string" then local list = characters(v) return list[#list] end
      return v[#v]
    end
    local function slice(v, from, to)
      if type(v) == "string" then
        local list = characters(v)
        return table.concat(list, "", math.max(from, 1), math.min(to, #list))
      end
      local out = {}
      for i = math.max(from, 1), math.min(to, #v) do out[#out + 1] = v[i] end
      return out
    end
    local function length(v) if type(v) == "string" then return #characters(v) end return #v end
    function swift.prefix(v, n) return slice(v, 1, n) end
    function swift.suffix(v, n) return slice(v, length(v) - n + 1, length(v)) end
    function swift.dropFirst(v, n) return slice(v, (n or 1) + 1, length(v)) end
    function swift.dropLast(v, n) return slice(v, 1, length(v) - (n or 1)) end
    function swift.contains(v, x)
      if type(v) == "string" then return string.find(v, x, 1, true) ~= nil end
      for _, e in ipairs(v) do if e == x then return true end end
      return v[x] == true
    end
    function swift.set(list) local s = {} for _, v in ipairs(list) do s[v] = true end return s end
    function swift.list(v)
      local out = {}
      if #v > 0 or next(v) == nil then for i, e in ipairs(v) do out[i] = e end return out end
      for k in pairs(v) do out[#out + 1] = k end
      return out
    end
    function swift.keys(d) local out = {} for k in pairs(d) do out[#out + 1] = k end return out end
    function swift.values(d) local out = {} for _, v in pairs(d) do out[#out + 1] = v end return out end
    function swift.concat(a, b) local out = swift.list(a) for _, v in ipairs(b) do out[#out + 1] = v end return out end
    -- Set's union of lists of objects (or values): each once, in order
    function swift.union(a, b)
      local out, seen = {}, {}
      for _, list in ipairs({ a, b }) do
        for _, v in ipairs(list) do if not seen[v] then seen[v] = true out[#out + 1] = v end end
      end
      return out
    end
    function swift.appendAll(list, more) for _, v in ipairs(more) do list[#list + 1] = v end end
    function swift.clear(t) for k in pairs(t) do t[k] = nil end end
    function swift.map(list, f) local out = {} for i, v in ipairs(list) do out[i] = f(v) end return out end
    function swift.compactMap(list, f)
      local out = {}
      for _, v in ipairs(list) do local r = f(v) if not absent(r) then out[#out + 1] = r end end
      return out
    end
    function swift.flatMap(list, f)
      local out = {}
      for _, v in ipairs(list) do for _, r in ipairs(f(v)) do out[#out + 1] = r end end
      return out
    end
    function swift.filter(list, f)
      local out = {}
      for _, v in ipairs(list) do if f(v) then out[#out + 1] = v end end
      return out
    end
    function swift.forEach(list, f) for _, v in ipairs(list) do f(v) end end
    function swift.firstWhere(list, f) for _, v in ipairs(list) do if f(v) then return v end end return nil end
    function swift.lastWhere(list, f) for i = #list, 1, -1 do if f(list[i]) then return list[i] end end return nil end
    function swift.containsWhere(list, f) return swift.firstWhere(list, f) ~= nil end
    function swift.allSatisfy(list, f) for _, v in ipairs(list) do if not f(v) then return false end end return true end
    function swift.firstIndex(list, x) for i, v in ipairs(list) do if v == x then return i - 1 end end return nil end
    function swift.sorted(list, less) local out = swift.list(list) table.sort(out, less) return out end
    function swift.reversed(list) local out = {} for i = #list, 1, -1 do out[#out + 1] = list[i] end return out end
    function swift.reduce(list, initial, f) local acc = initial for _, v in ipairs(list) do acc = f(acc, v) end return acc end
    function swift.min(list) local m for _, v in ipairs(list) do if m == nil or v < m then m = v end end return m end
    function swift.max(list) local m for _, v in ipairs(list) do if m == nil or v > m then m = v end end return m end

    -- A relationship's mutableSetValue(forKey:): add, add all, remove, remove all
    local function copy(list) local out = {} for i, v in ipairs(list) do out[i] = v end return out end
    function swift.addTo(object, key, value)
      local list = copy(object[key])
      for _, v in ipairs(list) do if v == value then return end end
      list[#list + 1] = value
      object[key] = list
    end
    function swift.addAllTo(object, key, values) for _, v in ipairs(values) do swift.addTo(object, key, v) end end
    function swift.removeFrom(object, key, value)
      local list = {}
      for _, v in ipairs(object[key]) do if v ~= value then list[#list + 1] = v end end
      object[key] = list
    end
    function swift.clearIn(object, key) object[key] = {} end

    return swift
    """#

  /// `port_test.lua`: each ported module loads and has its hooks; `swift.lua` behaves as Swift.
  static func test(modules: [(name: String, hooks: [String])]) -> String {
    var lines = [
      "-- port_test.lua: written by `migrun port`. Run it with `migrun test <this folder>`; add tests of your",
      "-- steps beside it (docs/policies.md, \"Test\": migrate{ mapping = …, source = … }).",
      "local swift = require \"swift\"",
      "",
    ]
    for module in modules {
      lines.append("test(\(LuaSource.string("\(module.name) loads, with its hooks")), function()")
      lines.append("  local policy = require \(LuaSource.string(module.name))")
      for hook in module.hooks { lines.append("  expect(type(policy.\(hook))):equals(\"function\")") }
      lines.append("end)")
    }
    lines += [
      "test(\"swift.lua splits, trims and converts as Swift does\", function()",
      "  expect(swift.split(\"Ada King Lovelace\", \" \")):equals({ \"Ada\", \"King\", \"Lovelace\" })",
      "  expect(swift.trim(\"  x \")):equals(\"x\")",
      "  expect(swift.int(\"42\")):equals(42)",
      "  expect(swift.int(\"4.2\")):equals(nil)",
      "  expect(swift.idiv(-7, 2)):equals(-3)",
      "  expect(swift.coalesce(NULL, 1)):equals(1)",
      "  expect(swift.dropFirst({ 1, 2, 3 })):equals({ 2, 3 })",
      "end)",
    ]
    return lines.joined(separator: "\n") + "\n"
  }
}
