-- A real store, as Core Data wrote it on a device, through this folder's mapping files: migrate{ store = … }
-- migrates a copy (never the file itself) the way `migrun migrate` would and returns its objects.
-- Paths are taken from the library's folder, beside this file, the working folder or a fixture folder
-- given with `migrun test --fixtures DIR` (scripts/test gives ../shared/fixtures/coredata, or
-- $MIGRUN_FIXTURES): found from any working folder.
local fixtures = "objcio-core-data-moody/"
local model = fixtures .. "models/Moody.xcdatamodeld"

test("a Moody 2 store from a device reaches Moody 6 with every mood, country and continent", function()
  local out = migrate { store = fixtures .. "stores/Moody 2.moody.sqlite", model = model }
  expect(#out.Mood):equals(4)
  expect(#out.Country):equals(3)
  expect(#out.Continent):equals(2)
  -- Moody 5 → 6 moves a country's continent code into a Continent object (Country5ToCountry6Policy).
  local byCode = {}
  for _, continent in ipairs(out.Continent) do byCode[continent.numericISO3166Code] = continent end
  expect(#byCode[10004].countries):equals(2)
  for _, mood in ipairs(out.Mood) do
    expect(mood.rating):equals(0) -- Moody 2 has no rating yet: the default
    expect(mood.creatorID):equals("__defaultOwner__")
  end
end)

test("the store can stop at a version on the way", function()
  local out = migrate { store = fixtures .. "stores/Moody 2.moody.sqlite", model = model, to = "Moody 4" }
  expect(#out.Mood):equals(4)
  expect(out.Country[1].continent):matches("^Continent/p%d+$")
end)

test("a store that is not there is an error, not a pass", function()
  expect_error(function() migrate { store = fixtures .. "stores/Nothing.sqlite", model = model } end, "no ")
end)
