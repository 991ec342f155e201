-- Moody 4 → Moody 5: the Continent entity is dropped; each country remembers its continent's code.
return {
  Country = {
    attributes = {
      isoContinent = function(src)
        local continent = src.continent
        if continent == NULL then return NULL end
        return continent.numericISO3166Code
      end,
    },
  },
  Continent = "remove",
}
