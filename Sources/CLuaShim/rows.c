// The bulk copy's row loop in C: rows straight from sqlite3_column_* into the Lua table the
// function receives, its results straight into sqlite3_bind_*, no host value built per row. Every
// case whose conversion is the host's to decide (text that is not UTF-8, a result of the wrong type)
// is handed back to the host for that row, so the host's rules and messages stay the only ones.
#define _GNU_SOURCE  // pthread_setname_np
#include "internal.h"
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

// One value of a row on its way to the insert: a SQLite type and its value; text and BLOB bytes in
// the row's own buffer.
typedef struct cell {
  int type;  // SQLITE_NULL, SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT or SQLITE_BLOB
  sqlite3_int64 i;
  double d;
  size_t off, len;
} cell;

typedef struct slot {
  cell *cells;
  char *bytes;
  size_t blen, bcap;
  int64_t pk;
} slot;

// The two cores: this thread reads rows and runs Lua, a writer thread binds and inserts them, a
// bounded ring of rows between (SLOTS rows at most in flight, so memory stays flat).
#define SLOTS 1024
// The writer wakes for this many rows at a time (or the end).
#define BATCH 256
// `count` is the hand-off: the reader fills slots[head…] and adds to it, the writer writes
// slots[tail…] and subtracts, neither taking the lock. The lock and conditions are only for
// sleeping: a side that finds nothing to do says so (`*_waiting`) under the lock, checks again and
// sleeps; the other signals only then (a futex call per row would cost more than the insert).
typedef struct ring {
  slot slots[SLOTS];
  int head, tail, cells;
  atomic_int count, closed, failed, writer_waiting, reader_waiting;
  int64_t written, failed_pk;
  sqlite3_stmt *insert;
  pthread_mutex_t lock;
  pthread_cond_t not_empty, not_full;
} ring;

typedef struct loop_ctx {
  mr_vm *vm;
  int64_t ref, in_keys, out_keys;
  sqlite3_stmt *select, *insert;
  int32_t plain, inputs, outputs;
  const int8_t *input_kinds, *output_kinds;
  int64_t limit, rows, failed_pk;
  int32_t stop;
  int status;
  mr_buf *out;
  ring *ring;
} loop_ctx;

static int slot_reserve(slot *s, size_t more) {
  if (s->blen + more <= s->bcap) return 1;
  size_t capacity = s->bcap ? s->bcap : 256;
  while (capacity < s->blen + more) capacity *= 2;
  char *bytes = realloc(s->bytes, capacity);
  if (!bytes) return 0;
  s->bytes = bytes;
  s->bcap = capacity;
  return 1;
}

static int cell_bytes(slot *s, cell *c, int type, const void *bytes, size_t length) {
  if (!slot_reserve(s, length)) return 0;
  if (length) memcpy(s->bytes + s->blen, bytes, length);
  c->type = type;
  c->off = s->blen;
  c->len = length;
  s->blen += length;
  return 1;
}

// Copies column `column` of the row `row` is on into `c`, unchanged.
static int cell_column(slot *s, cell *c, sqlite3_stmt *row, int column) {
  int type = sqlite3_column_type(row, column);
  c->type = type;
  switch (type) {
  case SQLITE_INTEGER: c->i = sqlite3_column_int64(row, column); return 1;
  case SQLITE_FLOAT: c->d = sqlite3_column_double(row, column); return 1;
  case SQLITE_TEXT: {
    const unsigned char *text = sqlite3_column_text(row, column);
    return cell_bytes(s, c, SQLITE_TEXT, text ? (const void *)text : "", (size_t)sqlite3_column_bytes(row, column));
  }
  case SQLITE_BLOB: {
    const void *blob = sqlite3_column_blob(row, column);
    return cell_bytes(s, c, SQLITE_BLOB, blob ? blob : "", (size_t)sqlite3_column_bytes(row, column));
  }
  default: return 1;
  }
}

static int bind_cell(sqlite3_stmt *insert, int parameter, const slot *s, const cell *c) {
  switch (c->type) {
  case SQLITE_INTEGER: return sqlite3_bind_int64(insert, parameter, c->i);
  case SQLITE_FLOAT: return sqlite3_bind_double(insert, parameter, c->d);
  case SQLITE_TEXT: return sqlite3_bind_text(insert, parameter, s->bytes + c->off, (int)c->len, SQLITE_STATIC);
  // An empty BLOB stays a BLOB (a NULL pointer would bind NULL).
  case SQLITE_BLOB:
    return c->len ? sqlite3_bind_blob(insert, parameter, s->bytes + c->off, (int)c->len, SQLITE_STATIC)
                  : sqlite3_bind_zeroblob(insert, parameter, 0);
  default: return sqlite3_bind_null(insert, parameter);
  }
}

// Binds a row and inserts it; on failure — a binding SQLite refuses (it would keep the last row's
// value), or the step — leaves the insert unreset (its message stays readable).
static int write_slot(sqlite3_stmt *insert, const slot *s, int cells) {
  for (int k = 0; k < cells; k++) {
    if (bind_cell(insert, k + 1, s, &s->cells[k]) != SQLITE_OK) return 0;
  }
  if (sqlite3_step(insert) != SQLITE_DONE) return 0;
  sqlite3_reset(insert);
  return 1;
}

// Whether bytes are well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF):
// what the host's decoder keeps unchanged.
static int valid_utf8(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    // Eight ASCII bytes at a time (most text): one test of their high bits.
    if (n - i >= 8) {
      uint64_t word;
      memcpy(&word, s + i, 8);
      if (!(word & 0x8080808080808080ULL)) {
        i += 8;
        continue;
      }
    }
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

// Stores the value at `index` for an attribute of `kind` in `c`; returns 0 when the host must
// convert it (or no memory is left for its bytes: the host then fails alike).
static int encode_output(lua_State *L, int index, int kind, slot *s, cell *c, int null_index) {
  int type = lua_type(L, index);
  c->type = SQLITE_NULL;
  if (type == LUA_TNIL || lua_rawequal(L, index, null_index)) return 1;
  switch (kind) {
  case MR_OUT_INT:
  case MR_OUT_INT16:
  case MR_OUT_INT32:
  case MR_OUT_BOOL: {
    if (kind == MR_OUT_BOOL && type == LUA_TBOOLEAN) {
      c->type = SQLITE_INTEGER;
      c->i = lua_toboolean(L, index);
      return 1;
    }
    // A value out of the attribute's width is the host's to refuse (and word).
    sqlite3_int64 low = kind == MR_OUT_INT16 ? -32768 : kind == MR_OUT_INT32 ? INT32_MIN : INT64_MIN;
    sqlite3_int64 high = kind == MR_OUT_INT16 ? 32767 : kind == MR_OUT_INT32 ? INT32_MAX : INT64_MAX;
    if (type == LUA_TNUMBER && lua_isinteger(L, index)) {
      lua_Integer number = lua_tointeger(L, index);
      if (kind != MR_OUT_BOOL && (number < low || number > high)) return 0;
      c->type = SQLITE_INTEGER;
      c->i = kind == MR_OUT_BOOL ? number != 0 : number;
      return 1;
    }
    if (kind != MR_OUT_BOOL && type == LUA_TNUMBER) {
      lua_Number number = lua_tonumber(L, index);
      if (number != nearbyint(number) || !(fabs(number) < 9.2e18)) return 0;
      if ((sqlite3_int64)number < low || (sqlite3_int64)number > high) return 0;
      c->type = SQLITE_INTEGER;
      c->i = (sqlite3_int64)number;
      return 1;
    }
    return 0;  // a string, a table…: the host's to refuse
  }
  case MR_OUT_REAL:
  case MR_OUT_DATE: {
    if (type != LUA_TNUMBER) return 0;
    lua_Number number = lua_tonumber(L, index);
    // SQLite would store a NaN REAL as NULL; Core Data writes the text NaN (as the host does). A
    // date that is NaN is the host's to refuse.
    if (isnan(number)) return kind == MR_OUT_REAL ? cell_bytes(s, c, SQLITE_TEXT, "NaN", 3) : 0;
    c->type = SQLITE_FLOAT;
    c->d = number;
    return 1;
  }
  case MR_OUT_TEXT: {
    if (type != LUA_TSTRING) return 0;
    size_t length;
    const char *text = lua_tolstring(L, index, &length);
    if (!valid_utf8((const unsigned char *)text, length)) return 0;
    return cell_bytes(s, c, SQLITE_TEXT, text, length);
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
  return cell_bytes(s, c, SQLITE_BLOB, bytes, length);
}

// Takes every row handed over since it last looked, writes them without the lock, then frees their
// slots at once.
static void wake(ring *r, pthread_cond_t *condition) {
  pthread_mutex_lock(&r->lock);
  pthread_cond_signal(condition);
  pthread_mutex_unlock(&r->lock);
}

// Takes every row handed over since it last looked (once BATCH are there, or at the end), writes
// them, then frees their slots at once.
static void *writer_main(void *argument) {
  ring *r = argument;
  pthread_setname_np(pthread_self(), "migrun-writer");
  for (;;) {
    if (atomic_load(&r->count) < BATCH && !atomic_load(&r->closed)) {
      pthread_mutex_lock(&r->lock);
      atomic_store(&r->writer_waiting, 1);
      while (atomic_load(&r->count) < BATCH && !atomic_load(&r->closed)) pthread_cond_wait(&r->not_empty, &r->lock);
      atomic_store(&r->writer_waiting, 0);
      pthread_mutex_unlock(&r->lock);
    }
    int available = atomic_load(&r->count);
    if (available == 0) return NULL;  // closed, and everything written
    for (int k = 0; k < available; k++) {
      slot *s = &r->slots[(r->tail + k) % SLOTS];
      if (atomic_load(&r->failed)) continue;
      if (write_slot(r->insert, s, r->cells)) {
        r->written++;
      } else {
        r->failed_pk = s->pk;
        atomic_store(&r->failed, 1);
      }
    }
    r->tail = (r->tail + available) % SLOTS;
    atomic_fetch_sub(&r->count, available);
    if (atomic_load(&r->reader_waiting)) wake(r, &r->not_full);
  }
}

static int loop_main(lua_State *L) {
  loop_ctx *ctx = lua_touserdata(L, 1);
  mr_vm *vm = ctx->vm;
  ring *r = ctx->ring;
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
    // A free slot (the writer frees them); an insert that failed ends the loop.
    if (atomic_load(&r->count) == SLOTS) {
      pthread_mutex_lock(&r->lock);
      atomic_store(&r->reader_waiting, 1);
      while (atomic_load(&r->count) == SLOTS && !atomic_load(&r->failed)) pthread_cond_wait(&r->not_full, &r->lock);
      atomic_store(&r->reader_waiting, 0);
      pthread_mutex_unlock(&r->lock);
    }
    if (atomic_load(&r->failed)) {
      ctx->stop = MR_LOOP_INSERT;
      return 0;
    }
    slot *s = &r->slots[r->head];
    s->blen = 0;
    int step = sqlite3_step(ctx->select);
    if (step == SQLITE_DONE) {
      ctx->stop = MR_LOOP_DONE;
      return 0;
    }
    if (step != SQLITE_ROW) {
      ctx->stop = MR_LOOP_SELECT;
      return 0;
    }
    s->pk = sqlite3_column_int64(ctx->select, 0);
    lua_pushvalue(L, function);
    // The prelude's row function adds two fields: room for them too.
    lua_createtable(L, 0, ctx->inputs + 3);
    int table = lua_gettop(L);
    lua_rawgeti(L, in_keys, 1);
    lua_pushinteger(L, s->pk);
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
    mr_arm(vm);
    int status = lua_pcall(L, 1, ctx->outputs, handler);
    mr_disarm(vm);
    if ((ctx->status = mr_call_status(vm, L, status)) != MR_OK) return 0;
    for (int32_t c = 0; c < ctx->plain; c++) {
      if (!cell_column(s, &s->cells[c], ctx->select, c)) return luaL_error(L, "not enough memory for a row");
    }
    // The results are the values above the function's slot, in output order.
    int first = function + 1;
    for (int32_t k = 0; k < ctx->outputs; k++) {
      if (encode_output(L, first + k, ctx->output_kinds[k], s, &s->cells[ctx->plain + k], null_index)) continue;
      // The host converts these results (and words any error): all of them, by position.
      mr_buf_reset(ctx->out);
      for (int32_t j = 0; j < ctx->outputs; j++) mr_read_value(L, first + j, ctx->out, 0);
      ctx->stop = MR_LOOP_OUTPUTS;
      return 0;
    }
    lua_settop(L, function);
    r->head = (r->head + 1) % SLOTS;
    if (atomic_fetch_add(&r->count, 1) + 1 >= BATCH && atomic_load(&r->writer_waiting)) wake(r, &r->not_empty);
    ctx->rows++;
  }
  ctx->stop = MR_LOOP_LIMIT;
  return 0;
}

mr_status mr_vm_row_loop(
  mr_vm *vm, int64_t ref, int64_t in_keys, int64_t out_keys, void *select, void *insert, int32_t plain,
  const int8_t *input_kinds, int32_t inputs, const int8_t *output_kinds, int32_t outputs, int64_t limit,
  int64_t *rows, int32_t *stop, int64_t *failed_pk, mr_buf *out) {
  *rows = 0;
  *failed_pk = 0;
  ring *r = calloc(1, sizeof *r);
  cell *cells = calloc((size_t)SLOTS * (size_t)(plain + outputs), sizeof *cells);
  if (!r || !cells) {
    free(r);
    free(cells);
    mr_set_error(vm, "not enough memory for the row loop");
    *stop = MR_LOOP_DONE;
    return MR_ERR_MEMORY;
  }
  for (int k = 0; k < SLOTS; k++) r->slots[k].cells = cells + (size_t)k * (size_t)(plain + outputs);
  r->cells = plain + outputs;
  r->insert = insert;
  pthread_mutex_init(&r->lock, NULL);
  pthread_cond_init(&r->not_empty, NULL);
  pthread_cond_init(&r->not_full, NULL);
  pthread_t writer;
  int threaded = pthread_create(&writer, NULL, writer_main, r) == 0;
  loop_ctx ctx = {
      .vm = vm, .ref = ref, .in_keys = in_keys, .out_keys = out_keys, .select = select,
      .insert = insert,
      .plain = plain, .inputs = inputs, .outputs = outputs, .input_kinds = input_kinds,
      .output_kinds = output_kinds, .limit = threaded ? limit : 0, .stop = MR_LOOP_DONE, .status = MR_OK,
      .out = out, .ring = r};
  lua_State *L = vm->L;
  int top = lua_gettop(L);
  vm->value_error = 0;
  mr_set_error(vm, NULL);
  // Rows make short-lived garbage (the row table, its strings, the results): generational
  // collection reclaims it young, at less cost per row than incremental sweeps.
  int previous_mode = lua_gc(L, LUA_GCGEN, 0, 0);
  if (!threaded) {
    ctx.status = MR_ERR_MEMORY;
    mr_set_error(vm, "cannot start the row loop's writer thread");
  } else {
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
    lua_gc(L, previous_mode, 0, 0);
    // Every row handed over is written (or the first failure recorded) before returning.
    atomic_store(&r->closed, 1);
    wake(r, &r->not_empty);
    pthread_join(writer, NULL);
  }
  *rows = r->written;
  *stop = ctx.stop;
  mr_status result = (mr_status)ctx.status;
  if (r->failed) {
    // An earlier row's insert failed: that is the error, whatever the reader met after it.
    *stop = MR_LOOP_INSERT;
    *failed_pk = r->failed_pk;
    result = MR_OK;
    mr_buf_reset(out);
  } else if (result == MR_OK && ctx.stop == MR_LOOP_OUTPUTS) {
    // The writer is gone: the host inserts this row through the same statement.
    for (int32_t c = 0; c < plain; c++) {
      sqlite3_bind_value(insert, c + 1, sqlite3_column_value(select, c));
    }
  }
  for (int k = 0; k < SLOTS; k++) free(r->slots[k].bytes);
  pthread_mutex_destroy(&r->lock);
  pthread_cond_destroy(&r->not_empty);
  pthread_cond_destroy(&r->not_full);
  free(cells);
  free(r);
  return result;
}
