-- data.units — unit conversion for numeric attributes.
--   local units = require "data.units"
--   units.convert(2, "lb", "kg")       -- 0.90718474
--   units.convert(350, "F", "C")       -- 176.67 (temperatures handle their offsets)
--   units.converter("oz", "g")(8)      -- a one-argument function, for attribute mappings
--   units.round(x, 2)                  -- round to 2 decimals
-- Units: mass g kg mg lb oz; length mm cm m km in ft yd mi; volume ml l tsp tbsp cup floz gal;
-- temperature C F K; time s min h. NULL passes through; unknown or mismatched units are errors.
local M = {}

local factors = {
  mass = { g = 1, kg = 1000, mg = 0.001, lb = 453.59237, oz = 28.349523125 },
  length = { m = 1, mm = 0.001, cm = 0.01, km = 1000, ["in"] = 0.0254, ft = 0.3048, yd = 0.9144, mi = 1609.344 },
  volume = { ml = 1, l = 1000, tsp = 4.92892159375, tbsp = 14.78676478125, cup = 236.5882365, floz = 29.5735295625,
             gal = 3785.411784 },
  time = { s = 1, min = 60, h = 3600 },
}
local kind_of = {}
for kind, table_of in pairs(factors) do for unit in pairs(table_of) do kind_of[unit] = kind end end

local to_kelvin = {
  C = function(v) return v + 273.15 end, F = function(v) return (v - 32) * 5 / 9 + 273.15 end,
  K = function(v) return v end,
}
local from_kelvin = {
  C = function(v) return v - 273.15 end, F = function(v) return (v - 273.15) * 9 / 5 + 32 end,
  K = function(v) return v end,
}

function M.convert(value, from, to)
  if value == NULL or value == nil then return NULL end
  if type(value) ~= "number" then error("cannot convert " .. tostring(value) .. ": not a number", 2) end
  if to_kelvin[from] and from_kelvin[to] then return from_kelvin[to](to_kelvin[from](value)) end
  local kind = kind_of[from]
  if not kind then error("unknown unit '" .. tostring(from) .. "'", 2) end
  if kind_of[to] ~= kind then error("cannot convert " .. kind .. " (" .. from .. ") to '" .. tostring(to) .. "'", 2) end
  return value * factors[kind][from] / factors[kind][to]
end

function M.known(unit) return kind_of[unit] ~= nil or to_kelvin[unit] ~= nil end

function M.converter(from, to)
  M.convert(1, from, to)   -- fail now, not per object
  return function(value) return M.convert(value, from, to) end
end

function M.round(value, decimals)
  if value == NULL or value == nil then return NULL end
  local scale = 10 ^ (decimals or 0)
  return math.floor(value * scale + 0.5) / scale
end

return M
