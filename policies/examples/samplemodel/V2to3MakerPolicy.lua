-- The Lua policy for V2to3MakerPolicy, the custom NSEntityMigrationPolicy that CoreDataPlus's
-- V2toV3 mapping model (.xcmappingmodel and .cdm) names for its car mappings (CarToCar,
-- SportCarToSportCar, LuxuryCarToLuxuryCar). SampleModel 2 keeps a car's maker as a string; in
-- SampleModel 3 it is a Maker object (unique by name): each car's maker is found or made and set
-- as the car's createdBy. The Swift class did it in createDestinationInstances, after super; here it
-- is stage 2, where relationships are set.
return {
  createRelationships = function(dst, m)
    local src = m:sources(m.mapping.name, dst)[1]
    local name = src.maker
    if name ~= NULL then
      dst.createdBy = m:find("Maker", { name = name }) or m:insert("Maker", { name = name })
    end
  end,
}
