-- Moody 2 → Moody 3: a new one-to-many Continent.moods ↔ Mood.continent.
-- A mood's continent is its country's continent (so a continent's moods are the union of its
-- countries' moods: the inverse follows). Everything else is copied 1:1.
return {
  Mood = {
    createRelationships = function(dst, m)
      local src = m:sources("MoodToMood", dst)[1]
      local country = src.country
      if country ~= NULL and country.continent ~= NULL then
        dst.continent = m:destinations("ContinentToContinent", country.continent)[1]
      end
      -- returning nothing: the default still sets every relationship this hook did not (country)
    end,
  },
}
