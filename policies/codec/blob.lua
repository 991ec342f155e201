-- codec.blob — reformat BLOB attributes.
--
-- Transformable attributes are usually NSKeyedArchiver archives; apps that move off them want JSON.
--   local blob = require "codec.blob"
--   blob.archive_to_json(src.settings)      -- keyed archive bytes → JSON text (NULL stays NULL)
--   blob.json_to_archive(text)              -- JSON text → keyed archive bytes (a Transformable value)
--   blob.json_to_plist(text)                -- JSON text → binary property list bytes
--   blob.plist_to_json(bytes)               -- binary or XML property list → JSON text
--   blob.hex_to_base64(text), blob.base64_to_hex(text)
--   blob.prefix(bytes, header)              -- prepend a format header unless it is there already
-- Archived class names (`$class`) are dropped from dictionaries; NSNull becomes JSON null.
local M = {}

local function strip(value)
  if type(value) ~= "table" then return value end
  local copy = {}
  for key, item in pairs(value) do
    if key ~= "$class" then copy[key] = strip(item) end
  end
  return copy
end

function M.archive_to_json(bytes)
  if bytes == NULL or bytes == nil then return NULL end
  return json.encode(strip(plist.unarchive(bytes)))
end

function M.json_to_archive(text)
  if text == NULL or text == nil then return NULL end
  return plist.archive(json.decode(text))
end

function M.json_to_plist(text)
  if text == NULL or text == nil then return NULL end
  return plist.encode(json.decode(text), "binary")
end

function M.plist_to_json(bytes)
  if bytes == NULL or bytes == nil then return NULL end
  return json.encode(plist.decode(bytes))
end

function M.hex_to_base64(text)
  if text == NULL or text == nil then return NULL end
  return base64.encode(hex.decode(text))
end

function M.base64_to_hex(text)
  if text == NULL or text == nil then return NULL end
  return hex.encode(base64.decode(text))
end

function M.prefix(bytes, header)
  if bytes == NULL or bytes == nil then return NULL end
  if bytes:sub(1, #header) == header then return bytes end
  return header .. bytes
end

return M
