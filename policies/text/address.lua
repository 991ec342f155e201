-- text.address — split a one-line postal address into fields, and join them back.
--   local address = require "text.address"
--   address.split("12 Baker Street, London NW1 6XE, United Kingdom")
--     -- { street = "12 Baker Street", city = "London", postcode = "NW1 6XE", country = "United Kingdom" }
--   address.split("1 Infinite Loop, Cupertino, CA 95014")
--     -- { street = "1 Infinite Loop", city = "Cupertino", region = "CA", postcode = "95014", country = NULL }
--   address.join(fields)   -- "street, postcode city, country" style, NULL fields skipped
-- Parts are separated by commas; the postcode is the token with a digit in the city part (or the
-- region part in the US style). Missing parts are NULL.
local M = {}

local function trim(text) return (text:gsub("^%s+", ""):gsub("%s+$", "")) end

function M.split(line)
  local result = { street = NULL, city = NULL, region = NULL, postcode = NULL, country = NULL }
  if line == NULL or line == nil then return result end
  if type(line) ~= "string" then error("an address is a string, not " .. type(line), 2) end
  local parts = {}
  for part in line:gmatch("[^,]+") do
    local trimmed = trim(part)
    if trimmed ~= "" then parts[#parts + 1] = trimmed end
  end
  if #parts == 0 then return result end
  result.street = parts[1]
  -- "CA 95014": a region and a postcode.
  local last = parts[#parts]
  local region, code = last:match("^(%u%u)%s+(%d[%d%-]*)$")
  if region and #parts >= 3 then
    result.region, result.postcode, result.city = region, code, parts[#parts - 1]
    return result
  end
  if #parts >= 3 then result.country = last end
  local city_part = parts[#parts >= 3 and #parts - 1 or 2]
  if city_part then
    local city, postcode = city_part:match("^(.-)%s+(%w*%d%w*%s*%w*)$")
    if city and city ~= "" then
      result.city, result.postcode = city, postcode
    else
      local postcode_first, rest = city_part:match("^(%d[%d%-]*)%s+(.+)$")
      if postcode_first then
        result.postcode, result.city = postcode_first, rest
      else
        result.city = city_part
      end
    end
  end
  return result
end

function M.join(fields)
  local out = {}
  local function add(value) if value ~= nil and value ~= NULL and value ~= "" then out[#out + 1] = value end end
  add(fields.street)
  local place = {}
  for _, key in ipairs({ "postcode", "city", "region" }) do
    local value = fields[key]
    if value ~= nil and value ~= NULL and value ~= "" then place[#place + 1] = value end
  end
  if #place > 0 then out[#out + 1] = table.concat(place, " ") end
  add(fields.country)
  if #out == 0 then return NULL end
  return table.concat(out, ", ")
end

return M
