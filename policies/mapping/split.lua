-- mapping.split — move attributes into a new related entity (the Core Data guide's example of
-- splitting Person's address fields into an Address entity).
--   local split = require "mapping.split"
--   return {
--     Recipe = {
--       createRelationships = split.into {
--         entity = "Author",                 -- the new destination entity
--         relationship = "author",           -- the to-one from the mapped object to it
--         key = "email",                     -- objects with the same key share one (find or create)
--         attributes = { email = "authorEmail", name = "authorName" },   -- new attribute = source attribute
--         -- or values = function(src) return { … } end, for computed values
--       },
--     },
--   }
-- Objects whose key is NULL get no related object. Other relationships are filled as usual.
local M = {}

function M.into(spec)
  assert(type(spec.entity) == "string", "split.into: entity = \"Name\"")
  assert(type(spec.relationship) == "string", "split.into: relationship = \"name\"")
  assert(spec.attributes or spec.values, "split.into: attributes = {…} or values = function(src)")
  return function(dst, m)
    local src = m:sources(m.mapping.name, dst)[1]
    if src == nil then return end
    local values
    if spec.values then
      values = spec.values(src)
    else
      values = {}
      for to, from in pairs(spec.attributes) do values[to] = src[from] end
    end
    local found
    if spec.key then
      local key = values[spec.key]
      if key == nil or key == NULL then return end
      found = m:find(spec.entity, { [spec.key] = key })
    end
    dst[spec.relationship] = found or m:insert(spec.entity, values)
  end
end

return M
