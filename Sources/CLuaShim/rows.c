// The bulk copy's row loop in C: rows straight from sqlite3_column_* into the Lua table the
// function receives, its results straight into sqlite3_bind_*, no host value built per row. Every
// case whose conversion is the host's to decide (text that is not UTF-8, a result of the wrong type)
// is handed back to the host for that row, so the host's rules and messages stay the only ones.
#include "internal.h"
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

typedef struct loop_ctx {
  mr_vm *vm;
  int64_t ref, in_keys, out_keys;
  sqlite3_stmt *select, *insert;
  int32_t plain, inputs, outputs;
  const int8_t *input_kinds, *output_kinds;
  int64_t limit, rows;
  int32_t stop;
  int status;
  mr_buf *out;
} loop_ctx;

// Whether bytes are well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF):
// what the host's decoder keeps unchanged.
static int valid_utf8(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t length;
    unsigned char low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) length = 2;
    else if (c == 0xE0) length = 3, low = 0xA0;
    else if (c == 0xED) length = 3, high = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF) length = 3;
    else if (c == 0xF0) length = 4, low = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) length = 4;
    else if (c == 0xF4) length = 4, high = 0x8F;
    else return 0;
    if (i + length > n) return 0;
    if (s[i + 1] < low || s[i + 1] > high) return 0;
    for (size_t k = 2; k < length; k++) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return 0;
    }
    i += length;
  }
  return 1;
}

// Pushes column `column` as the host would hand it to Lua for an attribute of `kind`; returns 0
// (pushing nothing) when the host must convert it.
static int push_input(lua_State *L, sqlite3_stmt *row, int column, int kind, int null_index) {
  switch (sqlite3_column_type(row, column)) {
  case SQLITE_NULL:
    lua_pushvalue(L, null_index);
    return 1;
  case SQLITE_INTEGER: {
    sqlite3_int64 number = sqlite3_column_int64(row, column);
    if (kind == MR_IN_BOOL) lua_pushinteger(L, number != 0);
    else if (kind == MR_IN_REAL || kind == MR_IN_DATE) lua_pushnumber(L, (lua_Number)number);
    else lua_pushinteger(L, number);
    return 1;
  }
  case SQLITE_FLOAT: {
    double number = sqlite3_column_double(row, column);
    if ((kind == MR_IN_INT || kind == MR_IN_BOOL) && number == nearbyint(number) && fabs(number) < 9.2e18) {
      lua_pushinteger(L, (lua_Integer)number);
    } else {
      lua_pushnumber(L, number);
    }
    return 1;
  }
  case SQLITE_TEXT: {
    const unsigned char *text = sqlite3_column_text(row, column);
    size_t length = (size_t)sqlite3_column_bytes(row, column);
    if (!text) text = (const unsigned char *)"";
    if (!valid_utf8(text, length)) return 0;
    if (kind == MR_IN_REAL && length == 3 && memcmp(text, "NaN", 3) == 0) {
      lua_pushnumber(L, NAN);
      return 1;
    }
    lua_pushlstring(L, (const char *)text, length);
    return 1;
  }
  default: {
    const void *blob = sqlite3_column_blob(row, column);
    size_t length = (size_t)sqlite3_column_bytes(row, column);
    if (!blob) blob = "";
    if (kind == MR_IN_TEXT && !valid_utf8(blob, length)) return 0;
    lua_pushlstring(L, blob, length);
    return 1;
  }
  }
}

// Binds the value at `index` for an attribute of `kind` as parameter `parameter`; returns 0 when the
// host must convert it. Strings are bound without a copy: the result table keeps them alive until
// the insert has run.
static int bind_output(lua_State *L, int index, int kind, sqlite3_stmt *insert, int parameter, int null_index) {
  int type = lua_type(L, index);
  if (type == LUA_TNIL || lua_rawequal(L, index, null_index)) return sqlite3_bind_null(insert, parameter) == SQLITE_OK;
  switch (kind) {
  case MR_OUT_INT:
  case MR_OUT_BOOL:
    if (kind == MR_OUT_BOOL && type == LUA_TBOOLEAN) {
      return sqlite3_bind_int64(insert, parameter, lua_toboolean(L, index)) == SQLITE_OK;
    }
    if (type == LUA_TNUMBER && lua_isinteger(L, index)) {
      lua_Integer number = lua_tointeger(L, index);
      if (kind == MR_OUT_BOOL) number = number != 0;
      return sqlite3_bind_int64(insert, parameter, number) == SQLITE_OK;
    }
    if (kind == MR_OUT_INT && type == LUA_TNUMBER) {
      lua_Number number = lua_tonumber(L, index);
      if (number != nearbyint(number) || !(fabs(number) < 9.2e18)) return 0;
      return sqlite3_bind_int64(insert, parameter, (sqlite3_int64)number) == SQLITE_OK;
    }
    break;  // a string is a BLOB (below); anything else is the host's
  case MR_OUT_REAL: {
    if (type != LUA_TNUMBER) return 0;
    lua_Number number = lua_tonumber(L, index);
    // SQLite would store a NaN REAL as NULL; Core Data writes the text NaN (as the host does).
    if (isnan(number)) return sqlite3_bind_text(insert, parameter, "NaN", 3, SQLITE_STATIC) == SQLITE_OK;
    return sqlite3_bind_double(insert, parameter, number) == SQLITE_OK;
  }
  case MR_OUT_TEXT: {
    if (type != LUA_TSTRING) return 0;
    size_t length;
    const char *text = lua_tolstring(L, index, &length);
    if (!valid_utf8((const unsigned char *)text, length)) return 0;
    return sqlite3_bind_text(insert, parameter, text, (int)length, SQLITE_STATIC) == SQLITE_OK;
  }
  case MR_OUT_UUID:
    if (type != LUA_TSTRING || lua_rawlen(L, index) != 16) return 0;
    break;
  default:
    break;
  }
  if (type != LUA_TSTRING) return 0;
  size_t length;
  const char *bytes = lua_tolstring(L, index, &length);
  // An empty BLOB stays a BLOB (a NULL pointer would bind NULL).
  if (length == 0) return sqlite3_bind_zeroblob(insert, parameter, 0) == SQLITE_OK;
  return sqlite3_bind_blob(insert, parameter, bytes, (int)length, SQLITE_STATIC) == SQLITE_OK;
}

static int loop_main(lua_State *L) {
  loop_ctx *ctx = lua_touserdata(L, 1);
  mr_vm *vm = ctx->vm;
  lua_pushcfunction(L, mr_message_handler);
  int handler = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, vm->null_ref);
  int null_index = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, (int)ctx->in_keys);
  int in_keys = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, (int)ctx->out_keys);
  int out_keys = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, (int)ctx->ref);
  int function = lua_gettop(L);
  if (lua_type(L, function) != LUA_TFUNCTION) {
    ctx->status = MR_ERR_VALUE;
    mr_set_error(vm, "the value called is not a function");
    return 0;
  }
  if ((lua_Integer)lua_rawlen(L, in_keys) < ctx->inputs + 1 || (lua_Integer)lua_rawlen(L, out_keys) < ctx->outputs) {
    ctx->status = MR_ERR_VALUE;
    mr_set_error(vm, "the row loop has more columns than the prepared call has keys");
    return 0;
  }
  while (ctx->rows < ctx->limit) {
    int step = sqlite3_step(ctx->select);
    if (step == SQLITE_DONE) {
      ctx->stop = MR_LOOP_DONE;
      return 0;
    }
    if (step != SQLITE_ROW) {
      ctx->stop = MR_LOOP_SELECT;
      return 0;
    }
    lua_pushvalue(L, function);
    // The prelude's row function adds two fields: room for them too.
    lua_createtable(L, 0, ctx->inputs + 3);
    int table = lua_gettop(L);
    lua_rawgeti(L, in_keys, 1);
    lua_pushinteger(L, sqlite3_column_int64(ctx->select, 0));
    lua_rawset(L, table);
    for (int32_t k = 0; k < ctx->inputs; k++) {
      lua_rawgeti(L, in_keys, k + 2);
      if (!push_input(L, ctx->select, ctx->plain + k, ctx->input_kinds[k], null_index)) {
        lua_settop(L, function);
        ctx->stop = MR_LOOP_ROW;
        return 0;
      }
      lua_rawset(L, table);
    }
    for (int32_t c = 0; c < ctx->plain; c++) {
      sqlite3_bind_value(ctx->insert, c + 1, sqlite3_column_value(ctx->select, c));
    }
    mr_arm(vm);
    int status = lua_pcall(L, 1, 1, handler);
    mr_disarm(vm);
    if ((ctx->status = mr_call_status(vm, L, status)) != MR_OK) return 0;
    int result = lua_gettop(L);
    if (lua_isnil(L, result)) {
      for (int32_t k = 0; k < ctx->outputs; k++) sqlite3_bind_null(ctx->insert, ctx->plain + k + 1);
    } else if (!lua_istable(L, result)) {
      ctx->status = MR_ERR_VALUE;
      lua_pushfstring(L, "the function returned a %s where a table of values was expected", luaL_typename(L, result));
      mr_set_error(vm, lua_tostring(L, -1));
      return 0;
    } else {
      for (int32_t k = 0; k < ctx->outputs; k++) {
        lua_rawgeti(L, out_keys, k + 1);
        lua_rawget(L, result);
        int bound = bind_output(L, -1, ctx->output_kinds[k], ctx->insert, ctx->plain + k + 1, null_index);
        lua_pop(L, 1);
        if (bound) continue;
        // The host converts these results (and words any error): all of them, by position.
        mr_buf_reset(ctx->out);
        for (int32_t j = 0; j < ctx->outputs; j++) {
          lua_rawgeti(L, out_keys, j + 1);
          lua_rawget(L, result);
          mr_read_value(L, -1, ctx->out, 0);
          lua_pop(L, 1);
        }
        ctx->stop = MR_LOOP_OUTPUTS;
        return 0;
      }
    }
    if (sqlite3_step(ctx->insert) != SQLITE_DONE) {
      ctx->stop = MR_LOOP_INSERT;
      return 0;
    }
    sqlite3_reset(ctx->insert);
    lua_settop(L, function);
    ctx->rows++;
  }
  ctx->stop = MR_LOOP_LIMIT;
  return 0;
}

mr_status mr_vm_row_loop(
  mr_vm *vm, int64_t ref, int64_t in_keys, int64_t out_keys, void *select, void *insert, int32_t plain,
  const int8_t *input_kinds, int32_t inputs, const int8_t *output_kinds, int32_t outputs, int64_t limit,
  int64_t *rows, int32_t *stop, mr_buf *out) {
  loop_ctx ctx = {
      .vm = vm, .ref = ref, .in_keys = in_keys, .out_keys = out_keys, .select = select, .insert = insert,
      .plain = plain, .inputs = inputs, .outputs = outputs, .input_kinds = input_kinds,
      .output_kinds = output_kinds, .limit = limit, .stop = MR_LOOP_DONE, .status = MR_OK, .out = out};
  lua_State *L = vm->L;
  int top = lua_gettop(L);
  vm->value_error = 0;
  mr_set_error(vm, NULL);
  lua_pushcfunction(L, loop_main);
  lua_pushlightuserdata(L, &ctx);
  int status = lua_pcall(L, 1, 0, 0);
  if (status != LUA_OK) {
    ctx.status = vm->value_error ? MR_ERR_VALUE : status == LUA_ERRMEM ? MR_ERR_MEMORY : MR_ERR_RUNTIME;
    mr_set_error(vm, status == LUA_ERRMEM ? "not enough memory" : lua_tostring(L, -1));
    mr_buf_reset(out);
  }
  lua_settop(L, top);
  vm->mem_tripped = 0;
  if (ctx.status == MR_ERR_MEMORY) lua_gc(L, LUA_GCCOLLECT);
  *rows = ctx.rows;
  *stop = ctx.stop;
  return (mr_status)ctx.status;
}
