-- merge.dedupe — merge rules for folding duplicates into one object.
-- A rule gets the two objects' values (plain tables; to-many values are lists) and returns the values
-- that survive:
--   local dedupe = require "merge.dedupe"
--   dedupe.keep_newest(a, b, "modified")    -- the whole object whose `modified` is larger (a on ties)
--   dedupe.max(a, b, "visits"), dedupe.min(a, b, "created")   -- one value, NULL-aware
--   dedupe.union(a.tags, b.tags)            -- members of both, first occurrence order, no repeats
--   local rule = dedupe.rule { newest = "modified", max = { "visits" }, min = { "created" }, union = { "tags" } }
--   rule(a, b)                              -- newest object's values, then the per-property choices
-- Values may be NULL; a NULL never wins over a value.
-- A rule is a migration merge rule as it is: in a mapping file's `merge` table or a --merge-rules file,
--   return { merge = { Person = dedupe.rule { newest = "modified", max = { "visits" } } } }
local M = {}

local function present(value) return value ~= nil and value ~= NULL end

function M.keep_newest(a, b, field)
  local x, y = a[field], b[field]
  if not present(y) then return a end
  if not present(x) then return b end
  return (y > x) and b or a
end

-- The value of `field` that `choose` (math.max or math.min) picks; NULL only when both are NULL.
local function pick(a, b, field, choose)
  local x, y = a[field], b[field]
  if not present(x) then return present(y) and y or NULL end
  if not present(y) then return x end
  return choose(x, y)
end

function M.max(a, b, field) return pick(a, b, field, math.max) end
function M.min(a, b, field) return pick(a, b, field, math.min) end

function M.union(first, second)
  local out, seen = {}, {}
  for _, list in ipairs({ first or {}, second or {} }) do
    if list ~= NULL then
      for _, item in ipairs(list) do
        local key = tostring(item)
        if not seen[key] then seen[key] = true; out[#out + 1] = item end
      end
    end
  end
  return out
end

function M.rule(spec)
  return function(a, b)
    local base = spec.newest and M.keep_newest(a, b, spec.newest) or a
    local other = base == a and b or a
    local out = {}
    for key, value in pairs(other) do out[key] = value end
    for key, value in pairs(base) do
      if present(value) or not present(out[key]) then out[key] = value end
    end
    for _, field in ipairs(spec.max or {}) do out[field] = M.max(a, b, field) end
    for _, field in ipairs(spec.min or {}) do out[field] = M.min(a, b, field) end
    for _, field in ipairs(spec.union or {}) do out[field] = M.union(a[field], b[field]) end
    return out
  end
end

return M
