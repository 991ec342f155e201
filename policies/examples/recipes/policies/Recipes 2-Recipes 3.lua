-- Recipes 2 → Recipes 3: `info` changes format — an NSKeyedArchiver dictionary becomes JSON text —
-- without changing name or type, so a version hash modifier ("json") forces the step. The cuisine
-- moves out of the blob into its own attribute.
local blob = require "codec.blob"
local fields = require "data.json_fields"

return {
  Recipe = {
    attributes = {
      info = function(src) return blob.archive_to_json(src.info) end,
      cuisine = function(src) return fields.get(blob.archive_to_json(src.info), "cuisine") end,
    },
  },
}
