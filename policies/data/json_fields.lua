-- data.json_fields — pull fields out of a JSON blob into attributes.
--   local fields = require "data.json_fields"
--   fields.get(src.payload, "author.name")           -- one field by dotted path (list items by number: "tags.1")
--   fields.extract(src.payload, { city = "address.city", zip = "address.zip" })
--     -- { city = "Paris", zip = "75001" }: absent fields and JSON null are NULL
--   fields.attribute("address.city", "payload")      -- an attribute function: function(src) … end
-- The blob may be JSON text or bytes; NULL gives NULL fields; malformed JSON is an error.
local M = {}

local function decoded(blob)
  if blob == NULL or blob == nil then return nil end
  local ok, value = pcall(json.decode, blob)
  if not ok then error("not JSON: " .. tostring(value), 3) end
  return value
end

local function walk(value, path)
  for part in path:gmatch("[^%.]+") do
    if type(value) ~= "table" then return NULL end
    local index = tonumber(part)
    value = value[index or part]
    if value == nil then return NULL end
  end
  return value
end

function M.get(blob, path)
  local value = decoded(blob)
  if value == nil then return NULL end
  return walk(value, path)
end

function M.extract(blob, paths)
  local value = decoded(blob)
  local out = {}
  for name, path in pairs(paths) do
    out[name] = value == nil and NULL or walk(value, path)
  end
  return out
end

function M.attribute(path, source_attribute)
  return function(src) return M.get(src[source_attribute], path) end
end

return M
