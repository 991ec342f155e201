-- Moody 5 → Moody 6: Continent comes back. For each country with an isoContinent, find or create the
-- continent with that code and link them (Core Data's book used a custom createDestinationInstances
-- policy for this); isoContinent is dropped. The hook is Country5ToCountry6Policy.lua's: the same
-- module stands in for that custom class when Apple's mapping model runs.
local policy = require "Country5ToCountry6Policy"

return {
  Country = {
    createRelationships = policy.createRelationships,
  },
}
