-- The Lua policy for Migrations.Country5ToCountry6Policy, the custom NSEntityMigrationPolicy that
-- Moody's "Moody 5-Moody 6.xcmappingmodel" names for its CountryToCountry mapping. When that mapping
-- model runs (migrun migrate … --policies <folder with the mapping model> --policies here), its
-- entity mappings and value expressions come from the model, and this module gives the class's
-- hooks: each country's isoContinent code becomes its continent, found or made (the Swift class did
-- it in createDestinationInstances; here it is stage 2, where relationships are set).
return {
  createRelationships = function(dst, m)
    local src = m:sources("CountryToCountry", dst)[1]
    local code = src.isoContinent
    if code ~= NULL then
      dst.continent = m:find("Continent", { numericISO3166Code = code })
        or m:insert("Continent", { numericISO3166Code = code })
    end
  end,
}
