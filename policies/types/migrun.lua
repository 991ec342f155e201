---@meta migrun
-- Type definitions of what migrun gives a Lua policy, for the Lua language server (LuaLS; VS Code's
-- "Lua" extension, Neovim's lua_ls). `.luarc.json` at the repository root points the server here.
-- These files are never run. `migrun test` checks that they name everything the host registers
-- (TypeDefinitionTests), so they cannot drift.

-- Values ------------------------------------------------------------------------------------------

---SQL NULL: a stored value that is empty. Never `nil` (an absent key is an error, an absent object nil).
---@class MigrunNull
NULL = {}

---A stored value: integer (Integer 16/32/64, Boolean), number (Double, Float, Decimal), string
---(String, URI, and Binary, Transformable and UUID as raw bytes), number for a Date (seconds since
---2001-01-01 00:00 UTC), or NULL.
---@alias MigrunValue integer|number|string|boolean|MigrunNull

-- Objects -----------------------------------------------------------------------------------------

---An object view: `src` (read-only, the source store) or `dst` (writable, the destination store).
---`obj.name` reads an attribute; a to-one relationship gives an object view or NULL; a to-many a
---list of object views (in order where ordered). `dst.name = value` writes. Reading a property
---the entity does not have is an error naming entity and property.
---@class MigrunObject
---@field [string] MigrunValue|MigrunObject|MigrunObject[]
local Object = {}

---The object's entity name.
---@return string
function Object:entity() end

---The object's `x-coredata://` URI.
---@return string
function Object:id() end

---A plain table copy of the object's values.
---@return table<string, MigrunValue|string|string[]>
function Object:values() end

---A key path through the object, as Core Data's `valueForKeyPath:` reads it: `"country.code"`,
---collection operators `@count`, `@sum`, `@avg`, `@min`, `@max`, `@unionOfObjects`,
---`@distinctUnionOfObjects`, `@unionOfSets`, `@distinctUnionOfSets`, `@unionOfArrays`,
---`@distinctUnionOfArrays`.
---@param path string
---@return any
function Object:valueForKeyPath(path) end

-- The migration manager ---------------------------------------------------------------------------

---The entity mapping a hook runs for.
---@class MigrunMappingInfo
---@field name string `SourceToDestination`, as Xcode names entity mappings
---@field source string|MigrunNull the source entity
---@field destination string|MigrunNull the destination entity
---@field userInfo table<string, any> the entity mapping's user info (a Lua entry's `userInfo`, an Xcode entity mapping's)

---The mapping file or mapping model a step runs.
---@class MigrunMappingModelInfo
---@field userInfo table<string, any> the file's top-level `userInfo`

---The migration manager `m`: Core Data's NSMigrationManager, as hooks and attribute functions see it.
---@class MigrunManager
---@field mapping MigrunMappingInfo the entity mapping being run
---@field from string the step's source version
---@field to string the step's destination version
---@field model MigrunMappingModelInfo the mapping file or mapping model being run
local Manager = {}

---A new destination object.
---@param entity string
---@param values? table<string, MigrunValue>
---@return MigrunObject
function Manager:insert(entity, values) end

---Records that `dst` was made from `src` (Core Data's association).
---@param src MigrunObject
---@param dst MigrunObject
function Manager:associate(src, dst) end

---The destination objects made from `objects` by the entity mapping `mapping`
---(Core Data's `destinationInstances(forEntityMappingName:sourceInstances:)`).
---@param mapping string
---@param objects MigrunObject|MigrunObject[]
---@return MigrunObject[]
function Manager:destinations(mapping, objects) end

---The source objects the entity mapping `mapping` made `objects` from (the reverse).
---@param mapping string
---@param objects MigrunObject|MigrunObject[]
---@return MigrunObject[]
function Manager:sources(mapping, objects) end

---The destination object with these values, or nil: `m:find(e, v) or m:insert(e, v)`.
---@param entity string
---@param values table<string, MigrunValue>
---@return MigrunObject?
function Manager:find(entity, values) end

---@class MigrunManagerFetchOptions
---@field args? MigrunValue[] the predicate's `%@` values, in order
---@field sort? string[] attribute names, `-name` descending; then by key
---@field limit? integer at most this many
---@field source? boolean fetch the source store's objects instead of the destination's

---Core Data's fetch in the manager's destination context (what the migration wrote so far: what
---earlier entity mappings made) or, with `source = true`, its source context. The predicate is
---NSPredicate's format, tested whole by the store (else an error names it).
---@param entity string
---@param predicate? string
---@param options? MigrunManagerFetchOptions
---@return MigrunObject[]
function Manager:fetch(entity, predicate, options) end

---Core Data's `super`: in `createDestinationInstances`, `m:default(src)` makes (and returns) the
---object the entity mapping would make, with the attribute functions' values, associated with
---`src`; in `createRelationships`,
---`m:default(dst)` fills `dst`'s relationships as the mapping would. The hook then adjusts it.
---@param object MigrunObject
---@return MigrunObject?
function Manager:default(object) end

---`obj:id()` where the entity has an attribute named `id` (attributes win over object methods).
---@param object MigrunObject
---@return string
function Manager:id(object) end

---`obj:entity()` where the entity has an attribute named `entity`.
---@param object MigrunObject
---@return string
function Manager:entity(object) end

---`obj:values()` where the entity has an attribute named `values`.
---@param object MigrunObject
---@return table<string, MigrunValue>
function Manager:values(object) end

---`obj:valueForKeyPath(path)` where the entity has an attribute named `valueForKeyPath`.
---@param object MigrunObject
---@param path string
---@return any
function Manager:valueForKeyPath(object, path) end

---A line on the migration's standard error, after the mapping file's name.
---@param message any
function Manager:log(message) end

-- A mapping file: `<From>-<To>.lua` ----------------------------------------------------------------

---One entity mapping, keyed by destination entity name in the file's table. Anything not mentioned
---is inferred as Core Data would.
---@class MigrunEntityMapping
---@field from? string the source entity (omit for kind "add")
---@field kind? "add"|"copy"|"transform"|"custom" default "transform"
---@field filter? fun(src: MigrunObject): boolean which source objects take part
---@field attributes? table<string, string|fun(src: MigrunObject, m: MigrunManager): MigrunValue> a source attribute's name (carried as Core Data carries it), or a function computing the value
---@field relationships? table<string, string|false> a source relationship's name, or false (left empty)
---@field begin? fun(m: MigrunManager)
---@field createDestinationInstances? fun(src: MigrunObject, m: MigrunManager) default: one destination object, associated
---@field endInstanceCreation? fun(m: MigrunManager)
---@field createRelationships? fun(dst: MigrunObject, m: MigrunManager) default: relationships through the associations
---@field endRelationshipCreation? fun(m: MigrunManager)
---@field performCustomValidation? fun(m: MigrunManager)
---@field finish? fun(m: MigrunManager) Core Data's `end` (a Lua keyword)
---@field userInfo? table<string, any> the entity mapping's user info, as `m.mapping.userInfo`

---What a mapping file returns: entity mappings by destination entity name ("copy", "add", or —
---keyed by a source entity — "remove" as shorthands), and `merge` rules for uniqueness collisions.
---@alias MigrunMappingFile table<string, MigrunEntityMapping|"copy"|"remove"|"add"|table<string, MigrunMigrationMergeRule>>

---A migration merge rule: two source objects mapped to one unique destination object; returns the
---values kept.
---@alias MigrunMigrationMergeRule fun(existing: table<string, MigrunValue>, incoming: table<string, MigrunValue>): table<string, MigrunValue>

-- A merge rule file (contexts) ---------------------------------------------------------------------

---A conflict at save: what a merge rule receives.
---@class MigrunMergeContext
---@field kind "update"|"delete"|"storeDeleted"|"uniqueness"
---@field entity string
---@field id string "Entity/pN"
---@field object table<string, any>|MigrunNull the context's values (NULL when it deleted the object)
---@field snapshot table<string, any>|MigrunNull what the context read (NULL for a new object)
---@field store table<string, any>|MigrunNull the row now (NULL when deleted there)
---@field oldVersion integer
---@field newVersion integer
---@field changed string[] the names the context changed
---@field constraint string[] the constrained names of a uniqueness conflict
local MergeContext = {}

---A standard merge policy's result: "storeTrump", "objectTrump", "overwrite" or "rollback".
---@param policy string
---@return table<string, any>
function MergeContext:merge(policy) end

---The larger of the object's and the store's value.
---@param field string
function MergeContext:max(field) end

---The smaller of the object's and the store's value.
---@param field string
function MergeContext:min(field) end

---The whole values table (object or store) whose `field` is larger: the newer edit.
---@param field string
---@return table<string, any>
function MergeContext:newest(field) end

---The union of both sides' to-many lists.
---@param field string
---@return string[]
function MergeContext:union(field) end

---What a merge rule file returns: a rule per entity.
---@alias MigrunMergeRules table<string, fun(c: MigrunMergeContext): table<string, any>|MigrunNull>

-- A custom stage file, <From>-<To>.stage.lua ------------------------------------------------------

---An object of a stage's context: `obj.name` reads (a to-one an object or NULL, a to-many a list),
---`obj.name = value` writes (objects and lists of them for relationships).
---@class MigrunStageObject
local StageObject = {}

---"Entity/pN" (a new object's is temporary until saved).
---@return string
function StageObject:id() end

---The object's entity name.
---@return string
function StageObject:entity() end

---Options of a fetch: arguments for %@ / %K (a list fills `IN %@` and `BETWEEN %@`), sort keys
---("name", or "-name" for descending), a limit; `batch` (a list whose objects are read a batch at a
---time, the batch before let go), `ids` (IDs, no objects), `properties` (a table per object of those
---properties only: to-ones and to-manys as IDs); for ctx:each, `save` (saves after each batch).
---@class MigrunFetchOptions
---@field args? any[]
---@field sort? string[]
---@field limit? integer
---@field batch? integer
---@field ids? boolean
---@field properties? string[]
---@field save? boolean

---A whole context on the store: before the step (willMigrate, the source version) or after it
---(didMigrate, the destination version). Changes count once saved.
---@class MigrunStageContext
---@field version string the version the store is at while the handler runs
---@field from string
---@field to string
local StageContext = {}

---Objects of `entity` passing `predicate` (NSPredicate's format syntax), sorted and limited; with
---`ids` their IDs, with `properties` plain tables, with `batch` a list read a batch at a time.
---@param entity string
---@param predicate? string
---@param options? MigrunFetchOptions
---@return MigrunStageObject[]|string[]|table[]
function StageContext:fetch(entity, predicate, options) end

---Calls `fn` with each object of `entity` passing `predicate`, `batch` (1000) at a time: a batch's
---objects are read when its turn comes and let go after it unless changed (with `save`, saved
---first). Returns how many objects it walked. Memory stays at one batch's objects.
---@param entity string
---@param predicate? string
---@param fn fun(object: MigrunStageObject)
---@param options? MigrunFetchOptions
---@return integer
function StageContext:each(entity, predicate, fn, options) end

---The object with this ID ("Trip/p3", from obj:id() or a fetch's `ids`).
---@param id string
---@return MigrunStageObject
function StageContext:object(id) end

---How many objects of `entity` pass `predicate` (counted in SQL where the predicate can be said there).
---@param entity string
---@param predicate? string
---@param options? MigrunFetchOptions
---@return integer
function StageContext:count(entity, predicate, options) end

---A new object of `entity` with `values`.
---@param entity string
---@param values? table<string, any>
---@return MigrunStageObject
function StageContext:insert(entity, values) end

---Deletes `object`; its relationships' delete rules apply at save.
---@param object MigrunStageObject
function StageContext:delete(object) end

---Saves every change (validation and uniqueness apply); a handler must save what it changes.
function StageContext:save() end

---Lets go of every object handed out so far (after a save): their tables name nothing afterwards.
---A handler holds at most the Lua memory limit / 256 objects at once; save and reset in batches.
function StageContext:reset() end

---A line on the migration's standard error, after the stage file's name and the handler's.
---@param ... any
function StageContext:log(...) end

---What a stage file returns.
---@class MigrunStage
---@field willMigrate? fun(ctx: MigrunStageContext)
---@field didMigrate? fun(ctx: MigrunStageContext)
