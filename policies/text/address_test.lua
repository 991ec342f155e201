local address = require "text.address"

test("street, postcode-last city, country", function()
  expect(address.split("12 Baker Street, London NW1 6XE, United Kingdom")):equals({
    street = "12 Baker Street", city = "London", region = NULL, postcode = "NW1 6XE", country = "United Kingdom",
  })
end)

test("US style with region and ZIP", function()
  expect(address.split("1 Infinite Loop, Cupertino, CA 95014")):equals({
    street = "1 Infinite Loop", city = "Cupertino", region = "CA", postcode = "95014", country = NULL,
  })
end)

test("postcode before the city", function()
  local fields = address.split("5 Rue de Rivoli, 75001 Paris, France")
  expect(fields.postcode):equals("75001")
  expect(fields.city):equals("Paris")
  expect(fields.country):equals("France")
end)

test("a street alone", function()
  expect(address.split("Main Street").street):equals("Main Street")
  expect(address.split("Main Street").city):is_null()
end)

test("NULL gives NULL fields", function()
  expect(address.split(NULL).street):is_null()
end)

test("join", function()
  expect(address.join({ street = "5 Rue de Rivoli", postcode = "75001", city = "Paris", country = "France" }))
    :equals("5 Rue de Rivoli, 75001 Paris, France")
  expect(address.join({})):is_null()
end)
