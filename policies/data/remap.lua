-- data.remap — enum and code remapping tables.
--   local remap = require "data.remap"
--   local status = remap.table({ draft = 0, published = 1, archived = 2 }, { default = 0 })
--   status("published")     -- 1
--   status("unknown")       -- 0 (the default); without a default it is an error naming the value
--   status(NULL)            -- NULL (unless `null = value` is given)
--   remap.invert({ a = 1 }) -- { [1] = "a" }: the way back
-- Keys may be strings or numbers; matching of strings ignores case when `ignore_case = true`.
local M = {}

function M.table(mapping, options)
  options = options or {}
  local lookup = {}
  for key, value in pairs(mapping) do
    lookup[(options.ignore_case and type(key) == "string") and key:lower() or key] = value
  end
  return function(value)
    if value == NULL or value == nil then
      if options.null ~= nil then return options.null end
      return NULL
    end
    local key = (options.ignore_case and type(value) == "string") and value:lower() or value
    local found = lookup[key]
    if found ~= nil then return found end
    if options.default ~= nil then return options.default end
    error("no mapping for " .. tostring(value), 2)
  end
end

function M.invert(mapping)
  local inverted = {}
  for key, value in pairs(mapping) do
    if inverted[value] ~= nil then error("cannot invert: " .. tostring(value) .. " appears twice", 2) end
    inverted[value] = key
  end
  return inverted
end

return M
