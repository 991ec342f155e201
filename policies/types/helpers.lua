---@meta helpers
-- The host's helper modules, globals in every script (also available with `require`).

json = {}

---JSON text of a value (sorted keys; NULL → null; integers and floats kept apart).
---@param value any
---@param pretty? boolean
---@return string
function json.encode(value, pretty) end

---The value of JSON text (null → NULL).
---@param text string
---@return any
function json.decode(text) end

base64 = {}

---@param bytes string
---@return string
function base64.encode(bytes) end

---@param text string
---@return string
function base64.decode(text) end

hex = {}

---@param bytes string
---@return string
function hex.encode(bytes) end

---@param text string
---@return string
function hex.decode(text) end

uuid = {}

---16 bytes → "E7350B5D-…".
---@param bytes string
---@return string
function uuid.string(bytes) end

---A new random UUID as text ("E7350B5D-…"), as Swift's `UUID().uuidString`.
---@return string
function uuid.new() end

---"E7350B5D-…" → 16 bytes.
---@param text string
---@return string
function uuid.bytes(text) end

---Dates as Core Data stores them: seconds since its reference date, 2001-01-01 00:00 UTC.
date = {}

---@param seconds number seconds since 1970-01-01 UTC
---@return number
function date.fromUnix(seconds) end

---@param reference number seconds since 2001-01-01 UTC
---@return number
function date.toUnix(reference) end

---ISO 8601 text of a Core Data date.
---@param reference number
---@return string
function date.iso(reference) end

---A Core Data date from ISO 8601 text.
---@param text string
---@return number
function date.parse(text) end

---The current time as a Core Data date (Swift's `Date()` in a ported policy).
---@return number
function date.now() end

plist = {}

---A property list (binary or XML) as Lua values.
---@param bytes string
---@return any
function plist.decode(bytes) end

---A property list of a value.
---@param value any
---@param format? "binary"|"xml"
---@return string
function plist.encode(value, format) end

---An NSKeyedArchiver archive as Lua values (NSNull → NULL; other classes carry ["$class"]).
---@param bytes string
---@return any
function plist.unarchive(bytes) end

---An NSKeyedArchiver archive (binary) Core Data's secure unarchiving reads: a list is an NSArray, a
---table with keys an NSDictionary, a string NSString (non-UTF-8 bytes NSData), a number or boolean
---NSNumber, NULL NSNull; plist.date/data/uuid/url values their classes.
---@param value any
---@return string bytes
function plist.archive(value) end

---An NSDate for plist.archive.
---@param seconds number seconds since 2001-01-01 (Core Data's reference date)
---@return table
function plist.date(seconds) end

---NSData for plist.archive (bytes that are UTF-8 would otherwise be an NSString).
---@param bytes string
---@return table
function plist.data(bytes) end

---An NSUUID for plist.archive.
---@param bytes string 16 bytes
---@return table
function plist.uuid(bytes) end

---An NSURL for plist.archive.
---@param text string
---@return table
function plist.url(text) end

---Printed on the migration's standard error (with the script's name).
---@param ... any
function print(...) end
