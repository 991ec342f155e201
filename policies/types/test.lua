---@meta test
-- What `migrun test` gives `*_test.lua` files.

---A test: `body` runs; an error or a failed expectation fails it.
---@param name string
---@param body fun()
function test(name, body) end

---@class MigrunExpectation
local Expectation = {}

---Deep equality (tables compared key by key; integers and floats apart).
---@param expected any
function Expectation:equals(expected) end

---The fields `expected` names, compared as `equals` does, at every depth; the others may be anything
---(one field of an object checked without listing the rest).
---@param expected table
function Expectation:includes(expected) end

---A number within `tolerance` of `expected`.
---@param expected number
---@param tolerance? number
function Expectation:near(expected, tolerance) end

function Expectation:is_null() end

function Expectation:is_true() end

function Expectation:is_false() end

---A string matching a Lua pattern.
---@param pattern string
function Expectation:matches(pattern) end

---A string or list of this length.
---@param count integer
function Expectation:has_length(count) end

---@param value any
---@return MigrunExpectation
function expect(value) end

---`body` must fail; with `pattern`, its message must match it.
---@param body fun()
---@param pattern? string
function expect_error(body, pattern) end

---The options of `migrate{…}`: a mapping file run on objects given here, or a real store migrated.
---@class MigrunMigrateOptions
---@field mapping? string the mapping file (`From-To.lua`, or an Xcode mapping model), run in memory on `source`
---@field source? table<string, table[]> source objects by entity; `_id = "label"` names one, relationships name labels
---@field model? string the model (default: found beside the mapping file)
---@field store? string a real store: a copy of it (with its -wal/-shm) migrated as `migrun migrate` would
---@field to? string with `store`: the destination version (default: the current one)

---Runs a mapping on test objects, or a copy of a real store; returns the destination objects by
---entity, in key order (each a table of values, `_id` "Entity/pN", relationships as ids).
---@param options MigrunMigrateOptions
---@return table<string, table[]>
function migrate(options) end
