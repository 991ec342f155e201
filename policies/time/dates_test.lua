local dates = require "time.dates"

test("the Unix epoch of 2001-01-01 is Core Data's zero", function()
  expect(dates.from_unix(978307200)):equals(0.0)
  expect(dates.to_unix(0.0)):equals(978307200.0)
end)

test("from_unix gives a float", function()
  expect(math.type(dates.from_unix(978307260))):equals("float")
  expect(dates.from_unix(978307260)):equals(60.0)
end)

test("JavaScript milliseconds", function()
  expect(dates.from_unix_millis(978307200500)):near(0.5, 1e-6)
end)

test("ISO-8601 with Z", function()
  expect(dates.from_iso("2001-01-01T00:01:00Z")):near(60, 1e-6)
end)

test("ISO-8601 with an offset", function()
  expect(dates.from_iso("2001-01-01T01:00:00+01:00")):near(0, 1e-6)
end)

test("a calendar day", function()
  expect(dates.from_day("2001-01-02")):near(86400, 1e-6)
  expect_error(function() dates.from_day("2/1/2001") end, "not a day")
end)

test("to_iso and back", function()
  local iso = dates.to_iso(86400.0)
  expect(iso):matches("^2001%-01%-02T00:00:00")
  expect(dates.from_iso(iso)):near(86400, 1e-6)
end)

test("NULL passes through", function()
  expect(dates.from_unix(NULL)):is_null()
  expect(dates.to_unix(NULL)):is_null()
  expect(dates.from_iso(NULL)):is_null()
  expect(dates.to_iso(NULL)):is_null()
end)

test("unparseable text is an error naming it", function()
  expect_error(function() dates.from_iso("yesterday") end, "not an ISO%-8601 date: yesterday")
end)
