-- Recipes 3 → Recipes 4: the author's name and e-mail move out of Recipe into a new Author entity,
-- one per e-mail address (find or create), with the name split into first and last; ingredient
-- quantities become metric (grams or millilitres), which a version hash modifier ("metric") marks.
local split = require "mapping.split"
local names = require "text.names"
local units = require "data.units"
local remap = require "data.remap"

-- Old unit → the metric unit it becomes (units already metric or unknown stay as they are).
local metric = remap.table(
  { oz = "g", lb = "g", cup = "ml", tbsp = "ml", tsp = "ml", floz = "ml" }, { default = false })

return {
  Recipe = {
    createRelationships = split.into {
      entity = "Author",
      relationship = "author",
      key = "email",
      values = function(src)
        local parts = names.split(src.authorName)
        return { email = src.authorEmail, name = src.authorName, firstName = parts.first, lastName = parts.last }
      end,
    },
  },
  Ingredient = {
    attributes = {
      quantity = function(src)
        local to = metric(src.unit)
        if to == NULL or not to then return src.quantity end
        return units.round(units.convert(src.quantity, src.unit, to), 1)
      end,
      unit = function(src)
        local to = metric(src.unit)
        if to == NULL or not to then return src.unit end
        return to
      end,
    },
  },
}
