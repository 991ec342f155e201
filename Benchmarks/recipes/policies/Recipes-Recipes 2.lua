-- The reference programs' transform (../shared/bench/reference/lua/transform_table.lua) as a
-- mapping: name → title with its first letter upper-cased, photo gets the 4-byte header "PHO1".
return {
  Recipe = {
    attributes = {
      title = function(src)
        local name = src.name
        if name == NULL then return NULL end
        return name:sub(1, 1):upper() .. name:sub(2)
      end,
      photo = function(src)
        local photo = src.photo
        if photo == NULL then return NULL end
        return "PHO1" .. photo
      end,
    },
  },
}
