// Values between Lua and the host: mr_buf, reading Lua values into it and pushing them back.
#include "internal.h"
#include <stdlib.h>
#include <string.h>

void mr_buf_reset(mr_buf *buf) {
  buf->count = 0;
  buf->blen = 0;
}

void mr_buf_free(mr_buf *buf) {
  free(buf->vals);
  free(buf->bytes);
  memset(buf, 0, sizeof *buf);
}

int mr_buf_add(mr_buf *buf, int32_t tag, int32_t count, int64_t i, double d, const void *bytes, size_t len) {
  if (buf->limit && ((buf->count + 1) * sizeof(mr_val) + buf->blen + len > buf->limit || len > buf->limit)) return -2;
  if (buf->count == buf->cap) {
    size_t cap = buf->cap ? buf->cap * 2 : 16;
    mr_val *vals = realloc(buf->vals, cap * sizeof *vals);
    if (!vals) return -1;
    buf->vals = vals;
    buf->cap = cap;
  }
  size_t off = 0;
  if (tag == MR_STR) {
    if (buf->blen + len > buf->bcap) {
      size_t cap = buf->bcap ? buf->bcap : 256;
      while (cap < buf->blen + len) cap *= 2;
      char *grown = realloc(buf->bytes, cap);
      if (!grown) return -1;
      buf->bytes = grown;
      buf->bcap = cap;
    }
    if (len) memcpy(buf->bytes + buf->blen, bytes, len);
    off = buf->blen;
    buf->blen += len;
  }
  buf->vals[buf->count++] = (mr_val){.tag = tag, .count = count, .i = i, .d = d, .off = off, .len = len};
  return 0;
}

static int value_error(lua_State *L, const char *message) {
  mr_vm_of(L)->value_error = 1;
  return luaL_error(L, "%s", message);
}

static void add_or_raise(lua_State *L, mr_buf *buf, int32_t tag, int64_t i, double d, const void *bytes, size_t len) {
  int added = mr_buf_add(buf, tag, 0, i, d, bytes, len);
  if (added == -2) {
    lua_pushfstring(L,
      "the values passed to the host exceed the memory limit of %I bytes (a table that shares subtables is "
      "copied once per reference)", (lua_Integer)buf->limit);
    value_error(L, lua_tostring(L, -1));
  }
  if (added != 0) luaL_error(L, "out of host memory");
}

void mr_read_value(lua_State *L, int index, mr_buf *buf, int depth) {
  index = lua_absindex(L, index);
  switch (lua_type(L, index)) {
  case LUA_TNIL: add_or_raise(L, buf, MR_NIL, 0, 0, NULL, 0); return;
  case LUA_TBOOLEAN: add_or_raise(L, buf, lua_toboolean(L, index) ? MR_TRUE : MR_FALSE, 0, 0, NULL, 0); return;
  case LUA_TNUMBER:
    if (lua_isinteger(L, index)) add_or_raise(L, buf, MR_INT, lua_tointeger(L, index), 0, NULL, 0);
    else add_or_raise(L, buf, MR_NUM, 0, lua_tonumber(L, index), NULL, 0);
    return;
  case LUA_TSTRING: {
    size_t len;
    const char *bytes = lua_tolstring(L, index, &len);
    add_or_raise(L, buf, MR_STR, 0, 0, bytes, len);
    return;
  }
  case LUA_TFUNCTION:
    lua_pushvalue(L, index);
    add_or_raise(L, buf, MR_FUNC, luaL_ref(L, LUA_REGISTRYINDEX), 0, NULL, 0);
    return;
  case LUA_TUSERDATA: {
    lua_rawgeti(L, LUA_REGISTRYINDEX, mr_vm_of(L)->null_ref);
    int is_null = lua_rawequal(L, -1, index);
    lua_pop(L, 1);
    if (is_null) {
      add_or_raise(L, buf, MR_NULL, 0, 0, NULL, 0);
      return;
    }
    value_error(L, "a userdata value cannot be passed to the host");
    return;
  }
  case LUA_TTABLE: {
    if (depth >= MR_MAX_NESTING) value_error(L, "tables nested more than 64 deep (a cycle?) cannot be passed to the host");
    luaL_checkstack(L, 4, "table too deep");
    size_t header = buf->count;
    add_or_raise(L, buf, MR_TABLE, 0, 0, NULL, 0);
    int32_t pairs = 0;
    lua_pushnil(L);
    while (lua_next(L, index) != 0) {
      mr_read_value(L, -2, buf, depth + 1);
      mr_read_value(L, -1, buf, depth + 1);
      lua_pop(L, 1);
      pairs++;
    }
    buf->vals[header].count = pairs;
    return;
  }
  default: {
    const char *type = luaL_typename(L, index);
    lua_pushfstring(L, "a %s value cannot be passed to the host", type);
    value_error(L, lua_tostring(L, -1));
  }
  }
}

void mr_push_value(lua_State *L, const mr_buf *buf, size_t *position) {
  const mr_val *value = &buf->vals[(*position)++];
  luaL_checkstack(L, 3, "values nested too deep");
  switch (value->tag) {
  case MR_FALSE: lua_pushboolean(L, 0); break;
  case MR_TRUE: lua_pushboolean(L, 1); break;
  case MR_INT: lua_pushinteger(L, value->i); break;
  case MR_NUM: lua_pushnumber(L, value->d); break;
  case MR_STR: lua_pushlstring(L, buf->bytes ? buf->bytes + value->off : "", value->len); break;
  case MR_NULL: lua_rawgeti(L, LUA_REGISTRYINDEX, mr_vm_of(L)->null_ref); break;
  case MR_FUNC: lua_rawgeti(L, LUA_REGISTRYINDEX, (int)value->i); break;
  case MR_TABLE: {
    int array = value->count > 0 && buf->vals[*position].tag == MR_INT && buf->vals[*position].i == 1;
    lua_createtable(L, array ? value->count : 0, array ? 0 : value->count);
    for (int32_t pair = 0; pair < value->count; pair++) {
      mr_push_value(L, buf, position);
      mr_push_value(L, buf, position);
      if (lua_isnil(L, -2)) {
        lua_pop(L, 2);
        continue;
      }
      lua_rawset(L, -3);
    }
    break;
  }
  default: lua_pushnil(L); break;
  }
}

int mr_push_values(lua_State *L, const mr_buf *buf) {
  size_t position = 0;
  int pushed = 0;
  while (position < buf->count) {
    mr_push_value(L, buf, &position);
    pushed++;
  }
  return pushed;
}
