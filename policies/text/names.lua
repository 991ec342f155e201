-- text.names — split and join personal names.
--   local names = require "text.names"
--   names.split("Ada King Lovelace")   -- { first = "Ada", middle = "King", last = "Lovelace" }
--   names.split("Lovelace, Ada")       -- "Last, First" is understood too
--   names.split("Plato")               -- { first = "Plato", middle = NULL, last = NULL }
--   names.join({ first = "Ada", last = "Lovelace" })   -- "Ada Lovelace" (NULL parts skipped)
-- Whitespace is collapsed. NULL or an empty name gives all-NULL parts; a non-string is an error.
local M = {}

local function words(text)
  local list = {}
  for word in text:gmatch("%S+") do list[#list + 1] = word end
  return list
end

function M.split(full)
  if full == NULL or full == nil then return { first = NULL, middle = NULL, last = NULL } end
  if type(full) ~= "string" then error("a name is a string, not " .. type(full), 2) end
  local last, rest = full:match("^%s*([^,]-)%s*,%s*(.-)%s*$")
  if last and last ~= "" then
    local parts = words(rest)
    return {
      first = parts[1] or NULL,
      middle = #parts > 1 and table.concat(parts, " ", 2) or NULL,
      last = last,
    }
  end
  local parts = words(full)
  if #parts == 0 then return { first = NULL, middle = NULL, last = NULL } end
  if #parts == 1 then return { first = parts[1], middle = NULL, last = NULL } end
  return {
    first = parts[1],
    middle = #parts > 2 and table.concat(parts, " ", 2, #parts - 1) or NULL,
    last = parts[#parts],
  }
end

function M.join(parts)
  local out = {}
  for _, key in ipairs({ "first", "middle", "last" }) do
    local value = parts[key]
    if value ~= nil and value ~= NULL and value ~= "" then out[#out + 1] = value end
  end
  if #out == 0 then return NULL end
  return table.concat(out, " ")
end

return M
