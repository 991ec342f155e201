-- Moody 3 → Moody 4: the abstract parent GeographicRegion is removed; Country and Continent become
-- standalone entities. Every object and value is kept 1:1 (the rest is inferred).
return {
  Country = "copy",
  Continent = "copy",
}
