-- Moody 5 → Moody 6: Continent comes back. For each country with an isoContinent, find or create the
-- continent with that code and link them (Core Data's book used a custom createDestinationInstances
-- policy for this); isoContinent is dropped.
return {
  Country = {
    createRelationships = function(dst, m)
      local src = m:sources("CountryToCountry", dst)[1]
      local code = src.isoContinent
      if code ~= NULL then
        dst.continent = m:find("Continent", { numericISO3166Code = code })
          or m:insert("Continent", { numericISO3166Code = code })
      end
    end,
  },
}
