local remap = require "data.remap"

test("codes map", function()
  local status = remap.table({ draft = 0, published = 1 })
  expect(status("draft")):equals(0)
  expect(status("published")):equals(1)
end)

test("an unknown code is an error naming it", function()
  local status = remap.table({ draft = 0 })
  expect_error(function() status("deleted") end, "no mapping for deleted")
end)

test("a default catches unknown codes", function()
  expect(remap.table({ a = 1 }, { default = -1 })("z")):equals(-1)
end)

test("NULL stays NULL unless told", function()
  expect(remap.table({ a = 1 })(NULL)):is_null()
  expect(remap.table({ a = 1 }, { null = 0 })(NULL)):equals(0)
end)

test("ignore_case", function()
  expect(remap.table({ Draft = 0 }, { ignore_case = true })("DRAFT")):equals(0)
end)

test("numbers as keys", function()
  expect(remap.table({ [1] = "one", [2] = "two" })(2)):equals("two")
end)

test("invert", function()
  expect(remap.invert({ a = 1, b = 2 })):equals({ [1] = "a", [2] = "b" })
  expect_error(function() remap.invert({ a = 1, b = 1 }) end, "appears twice")
end)
