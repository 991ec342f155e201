// The VM: state creation with a capped allocator, limits armed per call, protected operations.
#include "internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdint.h>

// The size class of a block of `size` bytes (1…MR_POOL_MAX), or -1 when it is not pooled.
static inline int pool_class(size_t size) { return size && size <= MR_POOL_MAX ? (int)((size - 1) >> 4) : -1; }

// A block of `size` bytes: from its class's list when one is kept, else from malloc (a pooled
// class's blocks are all of the class's full size, so any of them serves any size in it).
static void *pool_take(mr_vm *vm, size_t size) {
  int class = pool_class(size);
  if (class < 0) return malloc(size);
  void *block = vm->pool[class];
  if (!block) return malloc((size_t)(class + 1) << 4);
  vm->pool[class] = *(void **)block;
  vm->pooled[class]--;
  return block;
}

static void pool_give(mr_vm *vm, void *block, size_t size) {
  int class = pool_class(size);
  if (class < 0 || vm->pooled[class] >= MR_POOL_KEEP) {
    free(block);
    return;
  }
  *(void **)block = vm->pool[class];
  vm->pool[class] = block;
  vm->pooled[class]++;
}

// Returns every kept block to malloc (when the state is closed).
static void pool_drain(mr_vm *vm) {
  for (int class = 0; class < MR_POOL_CLASSES; class++) {
    while (vm->pool[class]) {
      void *block = vm->pool[class];
      vm->pool[class] = *(void **)block;
      free(block);
    }
    vm->pooled[class] = 0;
  }
}

// Growth beyond the cap fails, and keeps failing until the operation ends (so pcall cannot
// swallow it); shrinking and freeing always work. Lua gives every block's size back (`osize`), so
// small blocks go through the pool.
static void *mr_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  mr_vm *vm = ud;
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    if (ptr) pool_give(vm, ptr, old);
    vm->used -= old;
    return NULL;
  }
  if (nsize > old && (vm->mem_tripped || vm->used + vm->host_held - old + nsize > vm->limits.memory)) {
    vm->mem_tripped = 1;
    if (vm->armed && !vm->tripped) {
      // The allocator cannot walk the stack (it may be moving): the script's place is the one the
      // count hook saw last.
      vm->tripped = MR_ERR_MEMORY;
      snprintf(vm->trip_message, sizeof vm->trip_message, "%s%smemory limit of %zu bytes exceeded", vm->where,
        vm->where[0] ? " " : "", vm->limits.memory);
    }
    return NULL;
  }
  void *block;
  if (!ptr) {
    block = pool_take(vm, nsize);
  } else if (pool_class(old) < 0 && pool_class(nsize) < 0) {
    block = realloc(ptr, nsize);
  } else if (pool_class(old) >= 0 && pool_class(old) == pool_class(nsize)) {
    block = ptr;  // the block already has the class's full size
  } else {
    block = pool_take(vm, nsize);
    if (block) {
      memcpy(block, ptr, old < nsize ? old : nsize);
      pool_give(vm, ptr, old);
    } else if (nsize < old) {
      block = ptr;  // shrinking never fails: the bigger block serves (it exceeds the class's size)
    }
  }
  if (block) vm->used = vm->used - old + nsize;
  return block;
}

// Line coverage (`migrun test --coverage`): a table for the whole process, since a test runs
// mapping files in VMs of their own. Counted by the line hook, armed with the limits' count hook
// while coverage is on.
typedef struct {
  char *source;
  int32_t line;
  int64_t count;
} mr_cov_entry;

static pthread_mutex_t cov_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int cov_on = 0;
static mr_cov_entry *cov_entries = NULL;
static size_t cov_count = 0, cov_capacity = 0;
static size_t *cov_slots = NULL;  // open addressing: entry index + 1, 0 when free
static size_t cov_slot_count = 0;

static uint64_t cov_hash(const char *source, int32_t line) {
  uint64_t hash = 1469598103934665603ULL ^ (uint64_t)(uint32_t)line;
  for (const unsigned char *c = (const unsigned char *)source; *c; c++) hash = (hash ^ *c) * 1099511628211ULL;
  return hash;
}

static int cov_grow(void) {
  size_t slots = cov_slot_count ? cov_slot_count * 2 : 1024;
  size_t *fresh = calloc(slots, sizeof *fresh);
  if (!fresh) return 0;
  for (size_t i = 0; i < cov_count; i++) {
    size_t at = (size_t)(cov_hash(cov_entries[i].source, cov_entries[i].line) & (slots - 1));
    while (fresh[at]) at = (at + 1) & (slots - 1);
    fresh[at] = i + 1;
  }
  free(cov_slots);
  cov_slots = fresh;
  cov_slot_count = slots;
  return 1;
}

static void cov_record(const char *source, int32_t line) {
  pthread_mutex_lock(&cov_lock);
  if ((cov_count + 1) * 2 > cov_slot_count && !cov_grow()) goto done;
  size_t at = (size_t)(cov_hash(source, line) & (cov_slot_count - 1));
  while (cov_slots[at]) {
    mr_cov_entry *entry = &cov_entries[cov_slots[at] - 1];
    if (entry->line == line && strcmp(entry->source, source) == 0) {
      entry->count++;
      goto done;
    }
    at = (at + 1) & (cov_slot_count - 1);
  }
  if (cov_count == cov_capacity) {
    size_t capacity = cov_capacity ? cov_capacity * 2 : 1024;
    mr_cov_entry *grown = realloc(cov_entries, capacity * sizeof *grown);
    if (!grown) goto done;
    cov_entries = grown;
    cov_capacity = capacity;
  }
  char *copy = strdup(source);
  if (!copy) goto done;
  cov_entries[cov_count] = (mr_cov_entry){copy, line, 1};
  cov_slots[at] = ++cov_count;
done:
  pthread_mutex_unlock(&cov_lock);
}

void mr_coverage_enable(int on) { cov_on = on; }

void mr_coverage_reset(void) {
  pthread_mutex_lock(&cov_lock);
  for (size_t i = 0; i < cov_count; i++) free(cov_entries[i].source);
  free(cov_entries);
  free(cov_slots);
  cov_entries = NULL;
  cov_slots = NULL;
  cov_count = cov_capacity = cov_slot_count = 0;
  pthread_mutex_unlock(&cov_lock);
}

size_t mr_coverage_size(void) {
  pthread_mutex_lock(&cov_lock);
  size_t count = cov_count;
  pthread_mutex_unlock(&cov_lock);
  return count;
}

int mr_coverage_entry(size_t index, char *source, size_t source_size, int32_t *line, int64_t *count) {
  pthread_mutex_lock(&cov_lock);
  int found = index < cov_count;
  if (found) {
    snprintf(source, source_size, "%s", cov_entries[index].source);
    *line = cov_entries[index].line;
    *count = cov_entries[index].count;
  }
  pthread_mutex_unlock(&cov_lock);
  return found;
}


static void mr_hook(lua_State *L, lua_Debug *ar) {
  mr_vm *vm = mr_vm_of(L);
  if (ar->event == LUA_HOOKLINE) {
    // Scripts are named "=name" (run as text) or "@folder/module.lua" (required).
    if (cov_on && lua_getinfo(L, "S", ar) && (ar->source[0] == '@' || ar->source[0] == '=')) {
      // A function written on one line runs on the line that defines it: its body's runs are
      // recorded as the line negated, so a definition alone (the line running as the enclosing
      // code makes the closure) does not count as the body run.
      int32_t line = (int32_t)ar->currentline;
      if (ar->linedefined > 0 && ar->linedefined == ar->lastlinedefined && ar->linedefined == line) line = -line;
      cov_record(ar->source + 1, line);
    }
    return;
  }
  if (!vm->armed) return;
  char message[240];
  mr_note_where(L, vm);
  if (vm->tripped) {
    lua_sethook(L, mr_hook, LUA_MASKCOUNT, 1);
    lua_pushstring(L, vm->trip_message);
    lua_error(L);
  }
  vm->instructions_left -= lua_gethookcount(L);
  if (vm->instructions_left < 0) {
    mr_instruction_limit_text(vm, message, sizeof message);
    mr_trip(L, 0, MR_ERR_INSTRUCTIONS, message);
  }
  mr_check_clock(L, 0);
  lua_Debug deep;
  if (lua_getstack(L, vm->limits.call_depth, &deep)) {
    snprintf(message, sizeof message, "call depth limit of %d exceeded (runaway recursion?)", (int)vm->limits.call_depth);
    mr_trip(L, 0, MR_ERR_RECURSION, message);
  }
}

static int mr_panic(lua_State *L) {
  fprintf(stderr, "migrun: unprotected Lua error: %s\n", lua_tostring(L, -1));
  abort();
}

// Message handler: the error message followed by a traceback.
int mr_message_handler(lua_State *L) {
  const char *message = lua_tostring(L, 1);
  if (message == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) {
      message = lua_tostring(L, -1);
    } else {
      message = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
  }
  luaL_traceback(L, L, message, 1);
  return 1;
}

void mr_set_error(mr_vm *vm, const char *message) {
  free(vm->error);
  free(vm->traceback);
  vm->error = NULL;
  vm->traceback = NULL;
  if (!message) return;
  const char *marker = strstr(message, "\nstack traceback:\n");
  size_t length = marker ? (size_t)(marker - message) : strlen(message);
  vm->error = strndup(message, length);
  if (marker) vm->traceback = strdup(marker + 1);
}

enum { OP_SETUP, OP_RUN, OP_CALL, OP_ADD_PATH, OP_REGISTER, OP_UNREF, OP_KEYS, OP_ROW };

typedef struct op_ctx {
  mr_vm *vm;
  int op;
  const char *source, *name, *module;
  size_t len;
  int64_t ref, in_keys, out_keys;
  const mr_buf *args;
  mr_buf *out;
  int status;
} op_ctx;

void mr_arm(mr_vm *vm) {
  vm->tripped = 0;
  vm->mem_tripped = 0;
  vm->instructions_left = vm->limits.instructions;
  vm->credited = 0;
  vm->deadline = vm->run_deadline = vm->progress_deadline = mr_now() + vm->limits.seconds;
  vm->where[0] = '\0';
  vm->where_source = NULL;
  vm->armed = 1;
  lua_sethook(vm->L, mr_hook, LUA_MASKCOUNT | (cov_on ? LUA_MASKLINE : 0), MR_HOOK_STEP);
}

int mr_vm_hold(mr_vm *vm, int64_t bytes) {
  if (bytes <= 0) {
    size_t freed = (size_t)-bytes;
    vm->host_held -= freed < vm->host_held ? freed : vm->host_held;
    return 0;
  }
  if (vm->used + vm->host_held + (size_t)bytes > vm->limits.memory) {
    vm->hold_refused = 1;
    return -1;
  }
  vm->host_held += (size_t)bytes;
  return 0;
}

void mr_vm_credit(mr_vm *vm, int64_t objects) {
  if (!vm->armed || objects <= 0) return;
  vm->credited += objects;
  double grant = (double)vm->limits.instructions_per_object * (double)objects;
  double left = (double)vm->instructions_left + grant;
  vm->instructions_left = left >= 9.2e18 ? INT64_MAX : vm->instructions_left + (int64_t)grant;
  vm->run_deadline += vm->limits.seconds_per_object * (double)objects;
  vm->progress_deadline = mr_now() + vm->limits.seconds;
  vm->deadline = vm->progress_deadline < vm->run_deadline ? vm->progress_deadline : vm->run_deadline;
}

void mr_disarm(mr_vm *vm) {
  vm->armed = 0;
  vm->mem_tripped = 0;
  lua_sethook(vm->L, NULL, 0, 0);
}

int mr_call_status(mr_vm *vm, lua_State *L, int status) {
  if (vm->tripped) {
    const char *traceback = status == LUA_OK ? NULL : lua_tostring(L, -1);
    mr_set_error(vm, vm->trip_message);
    if (traceback && (traceback = strstr(traceback, "\nstack traceback:\n"))) vm->traceback = strdup(traceback + 1);
    return vm->tripped;
  }
  if (status == LUA_ERRMEM) {
    mr_set_error(vm, "not enough memory");
    return MR_ERR_MEMORY;
  }
  if (status != LUA_OK) {
    mr_set_error(vm, lua_tostring(L, -1));
    return MR_ERR_RUNTIME;
  }
  return MR_OK;
}

// Runs the function below `nargs` arguments on the stack, under the limits, and reads its results.
static void run_limited(lua_State *L, op_ctx *ctx, int handler, int nargs) {
  mr_vm *vm = ctx->vm;
  mr_arm(vm);
  int status = lua_pcall(L, nargs, LUA_MULTRET, handler);
  mr_disarm(vm);
  ctx->status = mr_call_status(vm, L, status);
  if (ctx->status != MR_OK) return;
  if (ctx->op != OP_ROW) {
    for (int index = handler + 1; index <= lua_gettop(L); index++) mr_read_value(L, index, ctx->out, 0);
    return;
  }
  if (lua_gettop(L) == handler || lua_isnil(L, handler + 1)) return;
  if (!lua_istable(L, handler + 1)) {
    ctx->status = MR_ERR_VALUE;
    lua_pushfstring(L, "the function returned a %s where a table of values was expected", luaL_typename(L, handler + 1));
    mr_set_error(vm, lua_tostring(L, -1));
    return;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, (int)ctx->out_keys);
  int keys = lua_gettop(L);
  lua_Integer count = (lua_Integer)lua_rawlen(L, keys);
  for (lua_Integer k = 1; k <= count; k++) {
    lua_rawgeti(L, keys, k);
    lua_rawget(L, handler + 1);
    mr_read_value(L, -1, ctx->out, 0);
    lua_pop(L, 1);
  }
}

static int op_main(lua_State *L) {
  op_ctx *ctx = lua_touserdata(L, 1);
  mr_vm *vm = ctx->vm;
  switch (ctx->op) {
  case OP_SETUP:
    mr_sandbox_setup(L, vm);
    return 0;
  case OP_ADD_PATH:
    lua_rawgeti(L, LUA_REGISTRYINDEX, vm->paths_ref);
    lua_pushstring(L, ctx->source);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    return 0;
  case OP_REGISTER:
    if (ctx->module) {
      lua_rawgeti(L, LUA_REGISTRYINDEX, vm->hostlibs_ref);
      if (lua_getfield(L, -1, ctx->module) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, ctx->module);
      }
    } else {
      lua_rawgeti(L, LUA_REGISTRYINDEX, vm->base_ref);
    }
    lua_pushinteger(L, ctx->ref);
    lua_pushcclosure(L, mr_host_trampoline, 1);
    lua_setfield(L, -2, ctx->name);
    return 0;
  case OP_UNREF:
    luaL_unref(L, LUA_REGISTRYINDEX, (int)ctx->ref);
    return 0;
  case OP_KEYS:
    lua_createtable(L, (int)ctx->args->count, 0);
    for (size_t k = 0; k < ctx->args->count; k++) {
      const mr_val *name = &ctx->args->vals[k];
      lua_pushlstring(L, ctx->args->bytes ? ctx->args->bytes + name->off : "", name->len);
      lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    ctx->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
  default:
    break;
  }
  lua_pushcfunction(L, mr_message_handler);
  int handler = lua_gettop(L);
  if (ctx->op == OP_RUN) {
    int status = luaL_loadbufferx(L, ctx->source, ctx->len, ctx->name, "t");
    if (status != LUA_OK) {
      ctx->status = status == LUA_ERRMEM ? MR_ERR_MEMORY : MR_ERR_SYNTAX;
      mr_set_error(vm, lua_tostring(L, -1));
      return 0;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, vm->make_env_ref);
    lua_call(L, 0, 1);
    if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
    run_limited(L, ctx, handler, 0);
    return 0;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, (int)ctx->ref);
  if (lua_type(L, -1) != LUA_TFUNCTION) {
    ctx->status = MR_ERR_VALUE;
    mr_set_error(vm, "the value called is not a function");
    return 0;
  }
  int nargs;
  if (ctx->op == OP_ROW) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, (int)ctx->in_keys);
    int keys = lua_gettop(L);
    lua_createtable(L, 0, (int)lua_rawlen(L, keys));
    size_t position = 0;
    for (lua_Integer k = 1; position < ctx->args->count; k++) {
      lua_rawgeti(L, keys, k);
      if (lua_isnil(L, -1)) return luaL_error(L, "more values than keys");
      mr_push_value(L, ctx->args, &position);
      if (lua_isnil(L, -1)) lua_pop(L, 2);
      else lua_rawset(L, -3);
    }
    lua_remove(L, keys);
    nargs = 1;
  } else {
    nargs = ctx->args ? mr_push_values(L, ctx->args) : 0;
  }
  run_limited(L, ctx, handler, nargs);
  return 0;
}

static mr_status protected_op(mr_vm *vm, op_ctx *ctx) {
  lua_State *L = vm->L;
  int top = lua_gettop(L);
  ctx->vm = vm;
  ctx->status = MR_OK;
  vm->value_error = 0;
  vm->hold_refused = 0;
  mr_set_error(vm, NULL);
  lua_pushcfunction(L, op_main);
  lua_pushlightuserdata(L, ctx);
  int status = lua_pcall(L, 1, 0, 0);
  if (status != LUA_OK) {
    ctx->status = vm->value_error ? MR_ERR_VALUE : status == LUA_ERRMEM ? MR_ERR_MEMORY : MR_ERR_RUNTIME;
    mr_set_error(vm, status == LUA_ERRMEM ? "not enough memory" : lua_tostring(L, -1));
    if (ctx->out) mr_buf_reset(ctx->out);
  }
  lua_settop(L, top);
  vm->mem_tripped = 0;
  if (ctx->status == MR_ERR_MEMORY) lua_gc(L, LUA_GCCOLLECT);
  return (mr_status)ctx->status;
}

mr_vm *mr_vm_new(const mr_limits *limits, mr_host_fn host_fn, void *host) {
  mr_vm *vm = calloc(1, sizeof *vm);
  if (!vm) return NULL;
  vm->limits = *limits;
  vm->host_args.limit = vm->host_out.limit = limits->memory;
  vm->host_fn = host_fn;
  vm->host = host;
  vm->L = lua_newstate(mr_alloc, vm);
  if (!vm->L) {
    pool_drain(vm);
    free(vm);
    return NULL;
  }
  *(mr_vm **)lua_getextraspace(vm->L) = vm;
  lua_atpanic(vm->L, mr_panic);
  op_ctx ctx = {.op = OP_SETUP};
  if (protected_op(vm, &ctx) != MR_OK) {
    fprintf(stderr, "migrun: cannot set up the Lua sandbox: %s\n", vm->error ? vm->error : "?");
    mr_vm_free(vm);
    return NULL;
  }
  return vm;
}

void mr_vm_free(mr_vm *vm) {
  if (!vm) return;
  if (vm->L) lua_close(vm->L);
  pool_drain(vm);
  mr_buf_free(&vm->host_args);
  mr_buf_free(&vm->host_out);
  free(vm->error);
  free(vm->traceback);
  free(vm);
}

void mr_vm_set_limits(mr_vm *vm, const mr_limits *limits) {
  vm->limits = *limits;
  vm->host_args.limit = vm->host_out.limit = limits->memory;
}

void mr_vm_set_host(mr_vm *vm, void *host) { vm->host = host; }

mr_status mr_vm_add_module_path(mr_vm *vm, const char *folder) {
  op_ctx ctx = {.op = OP_ADD_PATH, .source = folder};
  return protected_op(vm, &ctx);
}

mr_status mr_vm_run(mr_vm *vm, const char *source, size_t len, const char *chunkname, mr_buf *out) {
  op_ctx ctx = {.op = OP_RUN, .source = source, .len = len, .name = chunkname, .out = out};
  return protected_op(vm, &ctx);
}

mr_status mr_vm_call(mr_vm *vm, int64_t ref, const mr_buf *args, mr_buf *out) {
  op_ctx ctx = {.op = OP_CALL, .ref = ref, .args = args, .out = out};
  return protected_op(vm, &ctx);
}

mr_status mr_vm_register(mr_vm *vm, const char *module, const char *name, int32_t fn_id) {
  op_ctx ctx = {.op = OP_REGISTER, .module = module, .name = name, .ref = fn_id};
  return protected_op(vm, &ctx);
}

mr_status mr_vm_keys(mr_vm *vm, const mr_buf *names, int64_t *ref) {
  op_ctx ctx = {.op = OP_KEYS, .args = names};
  mr_status status = protected_op(vm, &ctx);
  *ref = ctx.ref;
  return status;
}

mr_status mr_vm_call_row(mr_vm *vm, int64_t ref, int64_t in_keys, const mr_buf *values, int64_t out_keys, mr_buf *out) {
  op_ctx ctx = {.op = OP_ROW, .ref = ref, .in_keys = in_keys, .out_keys = out_keys, .args = values, .out = out};
  return protected_op(vm, &ctx);
}

void mr_vm_unref(mr_vm *vm, int64_t ref) {
  op_ctx ctx = {.op = OP_UNREF, .ref = ref};
  protected_op(vm, &ctx);
}

const char *mr_vm_error(const mr_vm *vm) { return vm->error ? vm->error : ""; }
const char *mr_vm_traceback(const mr_vm *vm) { return vm->traceback ? vm->traceback : ""; }
size_t mr_vm_memory(const mr_vm *vm) { return vm->used; }
void mr_vm_collect(mr_vm *vm) { lua_gc(vm->L, LUA_GCCOLLECT); }
