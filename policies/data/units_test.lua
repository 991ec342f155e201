local units = require "data.units"

test("pounds to kilograms", function() expect(units.convert(2, "lb", "kg")):near(0.90718474) end)
test("ounces to grams", function() expect(units.convert(1, "oz", "g")):near(28.349523125) end)
test("cups to millilitres", function() expect(units.convert(1, "cup", "ml")):near(236.5882365) end)
test("miles to kilometres", function() expect(units.convert(1, "mi", "km")):near(1.609344) end)
test("minutes to hours", function() expect(units.convert(90, "min", "h")):near(1.5) end)
test("Fahrenheit to Celsius", function() expect(units.convert(212, "F", "C")):near(100) end)
test("Celsius to Kelvin", function() expect(units.convert(0, "C", "K")):near(273.15) end)
test("NULL passes through", function() expect(units.convert(NULL, "lb", "kg")):is_null() end)

test("unknown and mismatched units are errors", function()
  expect_error(function() units.convert(1, "stone", "kg") end, "unknown unit 'stone'")
  expect_error(function() units.convert(1, "kg", "ml") end, "cannot convert mass")
end)

test("a converter checks its units once", function()
  expect(units.converter("oz", "g")(2)):near(56.69904625)
  expect_error(function() units.converter("oz", "ml") end, "cannot convert")
end)

test("round", function()
  expect(units.round(3.14159, 2)):near(3.14)
  expect(units.round(NULL, 2)):is_null()
end)
