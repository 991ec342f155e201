local names = require "text.names"

test("first and last", function()
  expect(names.split("Ada Lovelace")):equals({ first = "Ada", middle = NULL, last = "Lovelace" })
end)

test("middle names are kept together", function()
  expect(names.split("Ada King Byron Lovelace")):equals({ first = "Ada", middle = "King Byron", last = "Lovelace" })
end)

test("Last, First", function()
  expect(names.split("Lovelace, Ada")):equals({ first = "Ada", middle = NULL, last = "Lovelace" })
end)

test("one word is a first name", function()
  expect(names.split("Plato")):equals({ first = "Plato", middle = NULL, last = NULL })
end)

test("extra whitespace is collapsed", function()
  expect(names.split("  Grace   Hopper ")):equals({ first = "Grace", middle = NULL, last = "Hopper" })
end)

test("NULL and empty give NULL parts", function()
  expect(names.split(NULL)):equals({ first = NULL, middle = NULL, last = NULL })
  expect(names.split("   ")):equals({ first = NULL, middle = NULL, last = NULL })
end)

test("a non-string is an error", function()
  expect_error(function() names.split(42) end, "a name is a string")
end)

test("join skips NULL parts", function()
  expect(names.join({ first = "Ada", middle = NULL, last = "Lovelace" })):equals("Ada Lovelace")
  expect(names.join({ first = NULL, last = NULL })):is_null()
end)

test("split and join round trip", function()
  expect(names.join(names.split("Ada King Lovelace"))):equals("Ada King Lovelace")
end)
