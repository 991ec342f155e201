/// Lua run once per mapping VM: object views (`src.name`, `dst.name = v`, `obj:entity()`,
/// `obj:id()`, `obj:values()`) and the manager `m`, over the host functions in `__migrun`.
/// Returns `invoke(hook, mappingName, info, object)`, through which every hook is called, and
/// `rows(entity, names, functions, mappingName, info)`, which makes the row function of a bulk
/// copy: it takes a source row (attributes and `__pk`) and returns the computed attributes; and
/// `userInfo([replacement])`, the file's `m.userInfo` table (its contents replaced first when given).
enum Prelude {
  static let source = #"""
    local host, NULL = __migrun, NULL
    local setmetatable, rawget, type, error, ipairs, tostring = setmetatable, rawget, type, error, ipairs, tostring

    local methods = {}
    local View = { __metatable = false }

    -- A source object's view holds its identity only: its values sit behind it (`__values`), so
    -- `src.name = …` reaches `__newindex` and is refused, never a silent write to a copy. Row
    -- functions (the bulk path) keep the row's values as its own fields: a read there is a table
    -- hit, not a call (a view per row measured 15% slower at a million objects), so only a key the
    -- row lacks is refused there.
    local function sourceView(values)
      return setmetatable({ __side = "src", __entity = rawget(values, "__entity"), __pk = rawget(values, "__pk"),
        __values = values }, View)
    end

    local function wrap(value)
      if type(value) ~= "table" then return value end
      if rawget(value, "__entity") ~= nil then
        if rawget(value, "__side") == "src" then return sourceView(value) end
        return setmetatable(value, View)
      end
      for index, item in ipairs(value) do value[index] = wrap(item) end
      return value
    end

    local function unwrap(value)
      if type(value) ~= "table" then return value end
      local entity = rawget(value, "__entity")
      if entity ~= nil then
        return { __entity = entity, __pk = rawget(value, "__pk"), __side = rawget(value, "__side") }
      end
      local copy = {}
      for key, item in pairs(value) do copy[key] = unwrap(item) end
      return copy
    end

    function methods.entity(self) return rawget(self, "__entity") end
    function methods.id(self) return host.uri(rawget(self, "__entity"), rawget(self, "__pk")) end
    function methods.values(self) return host.values(rawget(self, "__side"), rawget(self, "__entity"), rawget(self, "__pk")) end

    -- Key-value coding's key paths, as mapping models write them: keys through relationships
    -- (NULL as soon as one is NULL), a to-many maps the rest of the path over its members, and the
    -- collection operators @count, @sum, @avg, @min, @max, @unionOfObjects, @distinctUnionOfObjects,
    -- @unionOfSets, @distinctUnionOfSets, @unionOfArrays, @distinctUnionOfArrays.
    local function isObject(value) return type(value) == "table" and rawget(value, "__entity") ~= nil end
    local function identity(value)
      if isObject(value) then return rawget(value, "__entity") .. "/" .. tostring(rawget(value, "__pk")) end
      return value
    end
    local flattening = { ["@unionOfSets"] = true, ["@distinctUnionOfSets"] = true, ["@unionOfArrays"] = true,
      ["@distinctUnionOfArrays"] = true }
    local distinct = { ["@distinctUnionOfObjects"] = true, ["@distinctUnionOfSets"] = true,
      ["@distinctUnionOfArrays"] = true }
    local collecting = { ["@unionOfObjects"] = true, ["@distinctUnionOfObjects"] = true }
    local function walk(value, keys, i, path)
      if i > #keys then return value end
      if value == NULL or value == nil then return NULL end
      local key = keys[i]
      if key:sub(1, 1) == "@" then
        if isObject(value) or type(value) ~= "table" then
          error("valueForKeyPath(\"" .. path .. "\"): " .. key .. " needs a to-many relationship", 0)
        end
        if key == "@count" then return #value end
        local items = {}
        for _, member in ipairs(value) do
          local found = walk(member, keys, i + 1, path)
          if flattening[key] then
            if type(found) == "table" and not isObject(found) then
              for _, item in ipairs(found) do items[#items + 1] = item end
            elseif found ~= NULL then
              items[#items + 1] = found
            end
          elseif found ~= NULL then
            items[#items + 1] = found
          end
        end
        if flattening[key] or collecting[key] then
          if not distinct[key] then return items end
          local seen, unique = {}, {}
          for _, item in ipairs(items) do
            local id = identity(item)
            if not seen[id] then seen[id] = true; unique[#unique + 1] = item end
          end
          return unique
        end
        if key == "@sum" or key == "@avg" then
          local total = 0
          for _, item in ipairs(items) do total = total + item end
          if key == "@sum" then return total end
          if #items == 0 then return NULL end
          return total / #items
        end
        if key == "@min" or key == "@max" then
          local best = NULL
          for _, item in ipairs(items) do
            if best == NULL or (key == "@min" and item < best) or (key == "@max" and item > best) then best = item end
          end
          return best
        end
        error("valueForKeyPath(\"" .. path .. "\"): unknown collection operator " .. key, 0)
      end
      if isObject(value) then return walk(value[key], keys, i + 1, path) end
      if type(value) ~= "table" then
        error("valueForKeyPath(\"" .. path .. "\"): '" .. key .. "' of a " .. type(value) .. " value", 0)
      end
      local mapped = {}
      for _, member in ipairs(value) do mapped[#mapped + 1] = walk(member, keys, i, path) end
      return mapped
    end
    function methods.valueForKeyPath(self, path)
      local keys = {}
      for key in string.gmatch(path, "[^.]+") do keys[#keys + 1] = key end
      return walk(self, keys, 1, path)
    end

    -- Attributes win over methods: `src.id` is the attribute `id` wherever the entity has one (the
    -- most common attribute name of SwiftData models). Each entity's property names are asked once.
    local propertyNames = {}
    local function hasProperty(self, key)
      local side, entity = rawget(self, "__side"), rawget(self, "__entity")
      local place = side .. "/" .. entity
      local names = propertyNames[place]
      if names == nil then
        names = host.properties(side, entity)
        propertyNames[place] = names
      end
      return names[key] == true
    end

    View.__index = function(self, key)
      local method = methods[key]
      if method ~= nil and not hasProperty(self, key) then return method end
      local values = rawget(self, "__values")
      if values ~= nil then
        local value = values[key]
        if value ~= nil then return value end
      end
      return wrap(host.get(rawget(self, "__side"), rawget(self, "__entity"), rawget(self, "__pk"), key))
    end
    View.__pairs = function(self)
      local values, key = rawget(self, "__values") or {}, nil
      return function()
        local value
        repeat key, value = next(values, key) until key == nil or type(key) ~= "string" or key:sub(1, 2) ~= "__"
        return key, value
      end
    end
    View.__newindex = function(self, key, value)
      if rawget(self, "__side") ~= "dst" then
        error("source objects are read-only (" .. rawget(self, "__entity") .. "." .. tostring(key) .. ")", 2)
      end
      host.set(rawget(self, "__entity"), rawget(self, "__pk"), key, unwrap(value))
    end
    View.__tostring = function(self) return rawget(self, "__entity") .. "/p" .. rawget(self, "__pk") end
    View.__eq = function(a, b)
      return rawget(a, "__entity") == rawget(b, "__entity") and rawget(a, "__pk") == rawget(b, "__pk")
    end

    local Manager = {}
    Manager.__index = Manager
    Manager.__metatable = false
    function Manager:insert(entity, values)
      return wrap(host.insert(entity, unwrap(values or {})))
    end
    function Manager:associate(src, dst) host.associate(unwrap(src), unwrap(dst)) end
    local function each(objects, lookup, mapping)
      if objects == nil or objects == NULL then return {} end
      if rawget(objects, "__entity") ~= nil then return wrap(lookup(mapping, unwrap(objects))) end
      local all = {}
      for _, object in ipairs(objects) do
        for _, found in ipairs(lookup(mapping, unwrap(object))) do all[#all + 1] = found end
      end
      return wrap(all)
    end
    -- Both orders: `m:destinations(src [, mappingName])` as Core Data's
    -- `destinationInstances(forEntityMappingName:sourceInstances:)` reads once ported, and
    -- `m:destinations(mappingName, src)` (a name or nil first).
    local function lookUp(lookup, a, b)
      if type(a) == "table" then return each(a, lookup, b) end
      return each(b, lookup, a)
    end
    function Manager:destinations(a, b) return lookUp(host.destinations, a, b) end
    function Manager:sources(a, b) return lookUp(host.sources, a, b) end
    -- Core Data's `super`: in createDestinationInstances, `m:default(src)` makes (and returns) the
    -- object the entity mapping would make; in createRelationships, `m:default(dst)` fills its
    -- relationships as the mapping would. The hook then adjusts what the default made.
    -- The attribute functions run here, before the object is made, and their results go to the
    -- host with it: the object is inserted once with its values (as the row path makes it), not
    -- written again per function. The host checks the object first: none runs for an object that
    -- is not the hook's own, outside the hooks that have a default, or when no object is made.
    function Manager:default(object)
      local computed = type(object) == "table" and rawget(object, "__side") == "src" and rawget(self, "__computed")
      if not computed or next(computed) == nil or not host.defaultMakes(unwrap(object)) then
        return wrap(host.default(unwrap(object)))
      end
      local values = {}
      for name, compute in pairs(computed) do values[name] = unwrap(compute(object, self)) end
      return wrap(host.default(unwrap(object), values))
    end
    function Manager:find(entity, values)
      local found = host.find(entity, unwrap(values))
      if found == nil then return nil end
      return wrap(found)
    end
    function Manager:fetch(entity, predicate, options)
      local found = host.fetch(entity, predicate, unwrap(options))
      for i = 1, #found do found[i] = wrap(found[i]) end
      return found
    end
    function Manager:log(message) host.log(tostring(message)) end
    -- The object methods where no attribute can shadow them: `m:id(obj)` is `obj:id()` for an
    -- entity with an attribute named `id`.
    function Manager:id(object) return methods.id(object) end
    function Manager:entity(object) return methods.entity(object) end
    function Manager:values(object) return methods.values(object) end
    function Manager:valueForKeyPath(object, path) return methods.valueForKeyPath(object, path) end

    local managers = {}
    -- NSMigrationManager.userInfo: one table for every entity mapping of the file (one manager
    -- runs them all), whatever a hook keeps in it for another.
    local userInfo = {}
    local function manager(name, info)
      local m = managers[name]
      if m == nil then
        m = setmetatable({ mapping = info.mapping, model = info.model, from = info.from, to = info.to,
          userInfo = userInfo, __computed = info.computed }, Manager)
        managers[name] = m
      end
      return m
    end

    local function invoke(hook, name, info, object)
      local m = manager(name, info)
      if object == nil then return hook(m) end
      return hook(wrap(object), m)
    end

    -- Two forms of one row function: a table of the results by name (for calls from the host), and
    -- the results as values in `names` order (for the C row loop: no table built per row).
    local unpack = table.unpack
    local function rows(entity, names, functions, name, info)
      local m, count = manager(name, info), #names
      local byName = function(row)
        row.__side, row.__entity = "src", entity
        local view = setmetatable(row, View)
        local out = {}
        for index = 1, count do
          local key = names[index]
          out[key] = functions[key](view, m)
        end
        return out
      end
      local f = {}
      for index = 1, count do f[index] = functions[names[index]] end
      local a, b, c = f[1], f[2], f[3]
      local inOrder
      if count == 1 then
        inOrder = function(row)
          row.__side, row.__entity = "src", entity
          local view = setmetatable(row, View)
          return (a(view, m))
        end
      elseif count == 2 then
        inOrder = function(row)
          row.__side, row.__entity = "src", entity
          local view = setmetatable(row, View)
          return (a(view, m)), (b(view, m))
        end
      elseif count == 3 then
        inOrder = function(row)
          row.__side, row.__entity = "src", entity
          local view = setmetatable(row, View)
          return (a(view, m)), (b(view, m)), (c(view, m))
        end
      else
        inOrder = function(row)
          row.__side, row.__entity = "src", entity
          local view = setmetatable(row, View)
          local out = {}
          for index = 1, count do out[index] = (f[index](view, m)) end
          return unpack(out, 1, count)
        end
      end
      return byName, inOrder
    end

    local function userInfoTable(replacement)
      if replacement ~= nil then
        for key in next, userInfo do userInfo[key] = nil end
        for key, value in next, replacement do userInfo[key] = value end
      end
      return userInfo
    end

    return invoke, rows, userInfoTable
    """#
}
