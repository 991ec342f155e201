local dedupe = require "merge.dedupe"
local older = { name = "Ada", modified = 10.0, visits = 3, created = 1.0, tags = { "a", "b" } }
local newer = { name = "Ada L.", modified = 20.0, visits = 1, created = 5.0, tags = { "b", "c" } }

test("keep_newest", function()
  expect(dedupe.keep_newest(older, newer, "modified")):equals(newer)
  expect(dedupe.keep_newest(newer, older, "modified")):equals(newer)
end)

test("keep_newest: a NULL never wins", function()
  local undated = { name = "x", modified = NULL }
  expect(dedupe.keep_newest(undated, older, "modified")):equals(older)
  expect(dedupe.keep_newest(older, undated, "modified")):equals(older)
end)

test("max and min", function()
  expect(dedupe.max(older, newer, "visits")):equals(3)
  expect(dedupe.min(older, newer, "created")):equals(1.0)
  expect(dedupe.max({ v = NULL }, { v = NULL }, "v")):is_null()
end)

test("union keeps first-seen order without repeats", function()
  expect(dedupe.union(older.tags, newer.tags)):equals({ "a", "b", "c" })
  expect(dedupe.union(NULL, { "x" })):equals({ "x" })
end)

test("a rule combines them", function()
  local rule = dedupe.rule { newest = "modified", max = { "visits" }, min = { "created" }, union = { "tags" } }
  expect(rule(older, newer))
    :equals({ name = "Ada L.", modified = 20.0, visits = 3, created = 1.0, tags = { "a", "b", "c" } })
end)

test("a rule fills NULLs from the other object", function()
  local rule = dedupe.rule { newest = "modified" }
  expect(rule({ modified = 1.0, phone = "123" }, { modified = 2.0, phone = NULL }))
    :equals({ modified = 2.0, phone = "123" })
end)
