// Where a limit is raised: the script's place on the stack, the clock and the instruction budget
// read against the VM's limits, and the trip that records a limit and raises it as a Lua error.
// The sandbox (host functions, pattern guard) and the VM (the count hook) both raise limits here;
// this file calls neither of them.
#include "internal.h"
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

// The time limit's clock: the coarse monotonic clock (a few milliseconds' resolution, against a
// limit in seconds) — read once per call, and a row loop makes a call per row: 5 ns a read, where
// CLOCK_MONOTONIC took ~40 (the vDSO's TSC read), ~2% of a short row.
double mr_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// Whether a chunk is the host's own Lua ("=migrun prelude", "=migrun merge helpers", "=sandbox"):
// errors name the script that called into it, never it.
static int mr_is_host_chunk(const char *source) {
  return source && (strncmp(source, "=migrun ", 8) == 0 || strcmp(source, "=sandbox") == 0);
}

void mr_where_script(lua_State *L, int level) {
  lua_Debug ar;
  for (int at = level; lua_getstack(L, at, &ar); at++) {
    if (!lua_getinfo(L, "Sl", &ar)) break;
    if (ar.currentline > 0 && !mr_is_host_chunk(ar.source)) {
      lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
      return;
    }
  }
  luaL_where(L, level);
}

int mr_trip(lua_State *L, int level, int kind, const char *message) {
  mr_vm *vm = mr_vm_of(L);
  if (!vm->tripped) {
    vm->tripped = kind;
    mr_where_script(L, level);
    snprintf(vm->trip_message, sizeof vm->trip_message, "%s%s", lua_tostring(L, -1), message);
    lua_pop(L, 1);
  }
  lua_sethook(L, lua_gethook(L), LUA_MASKCOUNT, 1);
  lua_pushstring(L, vm->trip_message);
  return lua_error(L);
}

// Keeps "file:line:" of the script running now (the nearest frame that is no host chunk), for a
// limit raised where the stack cannot be read (the allocator). Copies, never allocates.
void mr_note_where(lua_State *L, mr_vm *vm) {
  lua_Debug ar;
  for (int at = 0; at < 8 && lua_getstack(L, at, &ar); at++) {
    if (!lua_getinfo(L, "Sl", &ar)) return;
    if (ar.currentline > 0 && !mr_is_host_chunk(ar.source)) {
      // Written again only when the place changed (the pointer is compared, never read).
      if (ar.source == vm->where_source && ar.currentline == vm->where_line) return;
      vm->where_source = ar.source;
      vm->where_line = ar.currentline;
      snprintf(vm->where, sizeof vm->where, "%s:%d:", ar.short_src, ar.currentline);
      return;
    }
  }
}

void mr_check_clock(lua_State *L, int level) {
  mr_vm *vm = mr_vm_of(L);
  if (!vm->armed || mr_now() <= vm->deadline) return;
  char message[240];
  if (vm->credited == 0) {
    snprintf(message, sizeof message, "time limit of %g s exceeded", vm->limits.seconds);
  } else if (vm->progress_deadline <= vm->run_deadline) {
    snprintf(message, sizeof message,
      "time limit of %g s without a new object exceeded (%lld objects handed over until then)",
      vm->limits.seconds, (long long)vm->credited);
  } else {
    snprintf(message, sizeof message,
      "time limit of %g s exceeded (%g s, and %g s for each of the %lld objects handed over)",
      vm->limits.seconds + vm->limits.seconds_per_object * (double)vm->credited, vm->limits.seconds,
      vm->limits.seconds_per_object, (long long)vm->credited);
  }
  mr_trip(L, level, MR_ERR_DEADLINE, message);
}

// The call's instruction budget: the limit, and what each object handed over added (saturating).
static int64_t instruction_budget(const mr_vm *vm) {
  double budget = (double)vm->limits.instructions + (double)vm->limits.instructions_per_object * (double)vm->credited;
  return budget >= 9.2e18 ? INT64_MAX : (int64_t)budget;
}

void mr_instruction_limit_text(const mr_vm *vm, char *out, size_t size) {
  if (vm->credited == 0) {
    snprintf(out, size, "instruction limit of %lld exceeded", (long long)vm->limits.instructions);
    return;
  }
  snprintf(out, size, "instruction limit of %lld exceeded (%lld, and %lld for each of the %lld objects handed over)",
    (long long)instruction_budget(vm), (long long)vm->limits.instructions,
    (long long)vm->limits.instructions_per_object, (long long)vm->credited);
}
