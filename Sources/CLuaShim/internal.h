// Internal to the shim: the VM record and the helpers its files share.
#ifndef MIGRUN_CLUASHIM_INTERNAL_H
#define MIGRUN_CLUASHIM_INTERNAL_H

#include "CLuaShim.h"
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#define MR_HOOK_STEP 1000
#define MR_MAX_NESTING 64
// Small blocks the state frees are kept for its next allocations of their size class (16 bytes
// apart, up to MR_POOL_MAX bytes, at most MR_POOL_KEEP blocks a class): a row's strings and
// tables are freed by the hundred at each collection, and glibc's per-thread cache holds only 7 a
// size — the rest went through its slower bins, malloc and free ~8% of a row loop's instructions.
#define MR_POOL_MAX 512
#define MR_POOL_CLASSES (MR_POOL_MAX / 16)
#define MR_POOL_KEEP 1024

struct mr_vm {
  lua_State *L;
  mr_limits limits;
  size_t used;               // bytes held by the Lua state
  int armed;                 // limits apply: a host call is running
  int mem_tripped;           // growth refused until the operation ends
  int tripped;               // the mr_status of the limit that tripped in this call, or 0
  int value_error;           // a value could not cross to the host
  int close_depth;           // coroutine.close calls under way (each may close another)
  int hold_refused;          // the host asked to hold bytes past the memory limit (mr_vm_hold)
  size_t host_held;          // bytes the host holds for scripts (mr_vm_hold), counted as the state's
  void *pool[MR_POOL_CLASSES];  // freed small blocks by size class, linked through their first word
  int pooled[MR_POOL_CLASSES];  // how many each list holds
  char where[LUA_IDSIZE + 24];  // "file:line:" of the script where the count hook last ran
  const char *where_source;  // the chunk and line `where` names
  int where_line;
  int64_t instructions_left;
  double deadline;           // the earlier of the two below (the only one read per check)
  double run_deadline;       // the call's start + seconds + seconds_per_object × credited
  double progress_deadline;  // the last credit + seconds (the start + seconds until one)
  int64_t credited;          // objects the host credited to this call (mr_vm_credit)
  char trip_message[512];
  mr_host_fn host_fn;
  void *host;
  mr_buf host_args, host_out;
  char *error, *traceback;
  int make_env_ref, base_ref, hostlibs_ref, paths_ref, null_ref;
};

/// The VM a state (or any of its threads) belongs to.
static inline mr_vm *mr_vm_of(lua_State *L) { return *(mr_vm **)lua_getextraspace(L); }

// values.c: values between Lua and the host.
/// Reads the value at `index` into `buf` (raises on values that cannot cross, or too deep nesting).
void mr_read_value(lua_State *L, int index, mr_buf *buf, int depth);
/// Pushes the value tree at *position and moves past it.
void mr_push_value(lua_State *L, const mr_buf *buf, size_t *position);
/// Pushes every top-level value of `buf`; returns how many.
int mr_push_values(lua_State *L, const mr_buf *buf);

// limits.c: raising a limit (uses values.c's helpers only; the sandbox and the VM both use it).
double mr_now(void);
/// Records that a limit tripped and raises it as a Lua error; every later hook raises it again.
/// `level` is the stack level whose position prefixes the message (0 in a hook, 1 in a C function).
int mr_trip(lua_State *L, int level, int kind, const char *message);
/// Raises the time limit when the call's deadline has passed (`level` as for mr_trip): after C work
/// the count hook does not see (a pattern match, a host function), so 10 s means about 10 s.
void mr_check_clock(lua_State *L, int level);
/// "instruction limit of N exceeded", N the call's budget (with what the objects handed over added).
void mr_instruction_limit_text(const mr_vm *vm, char *out, size_t size);
// Pushes "file:line: " of the nearest frame from `level` up that is a script's, not the host's
// own Lua (the prelude, the merge helpers, the sandbox) — what an error should name.
void mr_where_script(lua_State *L, int level);
/// Keeps "file:line:" of the script running now in `vm->where`, for a limit raised where the stack
/// cannot be read (the allocator). Copies, never allocates.
void mr_note_where(lua_State *L, mr_vm *vm);

// sandbox.c: the scripts' environment (uses limits.c and values.c; the VM uses it).
/// Opens the libraries and builds the sandbox (runs inside a protected call).
void mr_sandbox_setup(lua_State *L, mr_vm *vm);
/// The C function behind every host function: calls the host with the arguments, pushes its results.
int mr_host_trampoline(lua_State *L);

// vm.c: the state and its protected calls (uses all of the above; rows.c uses it).
/// Sets the VM's error message (and traceback, when `message` carries one after "stack traceback:").
void mr_set_error(mr_vm *vm, const char *message);
/// The message handler every protected call uses: the error message followed by a traceback.
int mr_message_handler(lua_State *L);
/// Arms the limits for one call (instruction budget, deadline) and disarms them.
void mr_arm(mr_vm *vm);
void mr_disarm(mr_vm *vm);
/// After a protected call under the limits returned `status`: the mr_status it ends in (MR_OK when
/// it succeeded), with the VM's error set.
int mr_call_status(mr_vm *vm, lua_State *L, int status);

#endif
