-- time.dates — Core Data dates (seconds since 2001-01-01 UTC) from and to other clocks.
--   local dates = require "time.dates"
--   dates.from_unix(1700000000)        -- Unix seconds → Core Data date
--   dates.from_unix_millis(1.7e12)     -- JavaScript milliseconds → Core Data date
--   dates.to_unix(d)                   -- Core Data date → Unix seconds (float)
--   dates.from_iso("2024-05-01T12:00:00Z")   -- ISO-8601 text (Z or ±hh:mm, optional fraction) → date
--   dates.from_day("2024-05-01")       -- a calendar day at 00:00 UTC → date
--   dates.to_iso(d)                    -- date → "2024-05-01T12:00:00Z"
-- NULL passes through; unparseable text is an error naming it.
local M = {}

M.UNIX_OFFSET = 978307200   -- seconds from 1970-01-01 to 2001-01-01

function M.from_unix(seconds)
  if seconds == NULL or seconds == nil then return NULL end
  return seconds - M.UNIX_OFFSET + 0.0
end

function M.from_unix_millis(millis)
  if millis == NULL or millis == nil then return NULL end
  return millis / 1000 - M.UNIX_OFFSET
end

function M.to_unix(date_value)
  if date_value == NULL or date_value == nil then return NULL end
  return date_value + M.UNIX_OFFSET + 0.0
end

function M.from_iso(text)
  if text == NULL or text == nil then return NULL end
  local ok, value = pcall(date.parse, text)
  if not ok then error("not an ISO-8601 date: " .. tostring(text), 2) end
  return value
end

function M.from_day(text)
  if text == NULL or text == nil then return NULL end
  if type(text) ~= "string" or not text:match("^%d%d%d%d%-%d%d%-%d%d$") then
    error("not a day (YYYY-MM-DD): " .. tostring(text), 2)
  end
  return M.from_iso(text .. "T00:00:00Z")
end

function M.to_iso(date_value)
  if date_value == NULL or date_value == nil then return NULL end
  return date.iso(date_value)
end

return M
