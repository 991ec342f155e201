local fields = require "data.json_fields"
local payload = '{"author":{"name":"Ada","langs":["en","fr"]},"stars":4,"note":null}'

test("a field by dotted path", function() expect(fields.get(payload, "author.name")):equals("Ada") end)
test("list items by number", function() expect(fields.get(payload, "author.langs.2")):equals("fr") end)
test("numbers stay integers", function() expect(fields.get(payload, "stars")):equals(4) end)
test("absent fields are NULL", function() expect(fields.get(payload, "author.age")):is_null() end)
test("JSON null is NULL", function() expect(fields.get(payload, "note")):is_null() end)
test("a NULL blob gives NULL", function() expect(fields.get(NULL, "a")):is_null() end)

test("extract several fields", function()
  expect(fields.extract(payload, { name = "author.name", stars = "stars", missing = "x.y" }))
    :equals({ name = "Ada", stars = 4, missing = NULL })
end)

test("malformed JSON is an error", function()
  expect_error(function() fields.get("{oops", "a") end, "not JSON")
end)

test("an attribute function", function()
  local name = fields.attribute("author.name", "payload")
  expect(name({ payload = payload })):equals("Ada")
end)
