-- codec.uuids — UUID strings ↔ Core Data's 16-byte UUID attributes.
--   local uuids = require "codec.uuids"
--   uuids.to_bytes("e7350b5d-…")   -- any case, with or without dashes or braces → 16 bytes
--   uuids.to_string(bytes)        -- 16 bytes → "E7350B5D-…" (upper case, as Foundation prints)
--   uuids.is_valid(text)          -- true for a well-formed UUID string
-- NULL passes through; anything malformed is an error naming the value.
local M = {}

local function normalized(text)
  local hexdigits = text:gsub("[{}%-]", "")
  if #hexdigits ~= 32 or hexdigits:find("[^%x]") then return nil end
  return hexdigits:upper()
end

function M.is_valid(text)
  return type(text) == "string" and normalized(text) ~= nil
end

function M.to_bytes(text)
  if text == NULL or text == nil then return NULL end
  local digits = type(text) == "string" and normalized(text)
  if not digits then error("not a UUID: " .. tostring(text), 2) end
  return hex.decode(digits)
end

function M.to_string(bytes)
  if bytes == NULL or bytes == nil then return NULL end
  if type(bytes) ~= "string" or #bytes ~= 16 then
    error("a UUID has 16 bytes, not " .. tostring(type(bytes) == "string" and #bytes or bytes), 2)
  end
  return uuid.string(bytes)
end

return M
