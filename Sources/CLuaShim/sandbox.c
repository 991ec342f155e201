// The sandbox: which libraries scripts see, per-script environments, `require` from named folders
// only, the NULL value, host functions, and the guard on pattern matching.
#include "internal.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// Runs once per VM with the real libraries as arguments; returns the function that makes a fresh,
// sealed environment for each script. Everything it hands to scripts is either a copy, a
// read-only view or a vetted function.
static const char bootstrap[] =
  "local G, NULL, hostlibs, base, findmodule, gccount, tripped = ...\n"
  "local next, type, tostring, error, setmetatable, rawget, pcall =\n"
  "  next, type, tostring, error, setmetatable, rawget, pcall\n"
  "local function readonly(t, name)\n"
  "  return setmetatable({}, {\n"
  "    __index = t,\n"
  "    __newindex = function(_, k)\n"
  "      error(\"attempt to modify read-only table '\" .. name .. \"' (field '\" .. tostring(k) .. \"')\", 2)\n"
  "    end,\n"
  // An iterator of its own, never `next, t`: the real table must not reach the script.
  "    __pairs = function()\n"
  "      local k\n"
  "      return function() local v; k, v = next(t, k); return k, v end\n"
  "    end,\n"
  "    __len = function() return #t end,\n"
  "    __metatable = false,\n"
  "  })\n"
  "end\n"
  "for _, k in next, { 'assert', 'error', 'ipairs', 'next', 'pairs', 'pcall', 'rawequal', 'rawget', 'rawlen',\n"
  "    'rawset', 'select', 'tonumber', 'tostring', 'type', 'getmetatable', '_VERSION' } do\n"
  "  base[k] = G[k]\n"
  "end\n"
  // A limit's error is raised from the count hook, and Lua runs a message handler in the hook's
  // context, where hooks are off: once a limit has tripped, the script's handler must not run.
  "local xpcall = G.xpcall\n"
  "base.xpcall = function(f, handler, ...)\n"
  "  return xpcall(f, function(message)\n"
  "    if tripped() then return message end\n"
  "    return handler(message)\n"
  "  end, ...)\n"
  "end\n"
  "local function unplaced(message) return (tostring(message):gsub('^[^:]*:%d+: ', '')) end\n"
  "base.setmetatable = function(t, mt)\n"
  "  if type(mt) == 'table' and rawget(mt, '__gc') ~= nil then\n"
  "    error('__gc metamethods are not allowed in the sandbox', 2)\n"
  "  end\n"
  "  local ok, result = pcall(setmetatable, t, mt)\n"
  "  if not ok then error(unplaced(result), 2) end\n"
  "  return result\n"
  "end\n"
  "base.collectgarbage = function(option)\n"
  "  if option == nil or option == 'count' then return gccount() end\n"
  "  error(\"collectgarbage('\" .. tostring(option) .. \"') is not allowed in the sandbox (only 'count')\", 2)\n"
  "end\n"
  "base.NULL = NULL\n"
  "local libs = { string = G.string, table = G.table, math = G.math, utf8 = G.utf8, coroutine = G.coroutine,\n"
  "  os = { time = G.os.time, clock = G.os.clock, date = G.os.date } }\n"
  "local envmeta = {\n"
  "  __index = function(_, k) error(\"undefined global '\" .. tostring(k) .. \"'\", 2) end,\n"
  "  __metatable = false,\n"
  "}\n"
  "local function make_env()\n"
  "  local env = {}\n"
  "  for k, v in next, base do env[k] = v end\n"
  "  for k, v in next, libs do env[k] = readonly(v, k) end\n"
  "  for k, v in next, hostlibs do env[k] = readonly(v, k) end\n"
  "  env._G = env\n"
  "  return setmetatable(env, envmeta)\n"
  "end\n"
  "local loaded, LOADING = {}, {}\n"
  "base.require = function(name)\n"
  "  if type(name) ~= 'string' then\n"
  "    error(\"bad argument #1 to 'require' (module name expected, got \" .. type(name) .. ')', 2)\n"
  "  end\n"
  "  local value = loaded[name]\n"
  "  if value == LOADING then error(\"circular require of module '\" .. name .. \"'\", 2) end\n"
  "  if value ~= nil then return value end\n"
  "  if hostlibs[name] ~= nil then\n"
  "    value = readonly(hostlibs[name], name)\n"
  "    loaded[name] = value\n"
  "    return value\n"
  "  end\n"
  "  local chunk, path, placed = findmodule(name, make_env())\n"
  "  if not chunk then error(path, placed and 0 or 2) end\n"
  "  loaded[name] = LOADING\n"
  "  local ok, result = pcall(chunk, name, path)\n"
  "  if not ok then\n"
  "    loaded[name] = nil\n"
  "    error(result, 0)\n"
  "  end\n"
  "  if result == nil then result = true end\n"
  "  loaded[name] = result\n"
  "  return result\n"
  "end\n"
  "return make_env\n";

// A module name is dot-separated identifiers: no slashes, no "..", no absolute paths.
static int valid_module_name(const char *name, size_t len) {
  if (len == 0 || len > 200) return 0;
  int at_start = 1;
  for (size_t i = 0; i < len; i++) {
    char c = name[i];
    if (c == '.') {
      if (at_start) return 0;
      at_start = 1;
      continue;
    }
    int letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    int digit = c >= '0' && c <= '9';
    if (!letter && !(digit && !at_start)) return 0;
    at_start = 0;
  }
  return !at_start;
}

// Reads a whole module file into a userdata on the stack (collected with it); NULL when unreadable.
static const char *read_file(lua_State *L, FILE *file, size_t *len) {
  if (fseek(file, 0, SEEK_END) != 0) return NULL;
  long size = ftell(file);
  if (size < 0 || size > 16 * 1024 * 1024 || fseek(file, 0, SEEK_SET) != 0) return NULL;
  char *bytes = lua_newuserdatauv(L, (size_t)size + 1, 0);
  *len = fread(bytes, 1, (size_t)size, file);
  return ferror(file) ? NULL : bytes;
}

static _Atomic(mr_file_opened) file_opened = NULL;

void mr_set_file_opened(mr_file_opened hook) { file_opened = hook; }

// How a module file was found: not there (search on), there and opened, or there and refused.
typedef enum { MODULE_ABSENT, MODULE_OPENED, MODULE_OUTSIDE, MODULE_UNREADABLE } module_found;

// Opens the module file at `path` by its real path, once every link is resolved: a plain file
// inside `folder` only (a link leading out of the policy folder is never read; a FIFO would block,
// a device never ends). The real path is checked, then that same path opened: nothing can be
// swapped in between the check and the read.
static module_found open_module(const char *folder, const char *path, FILE **file) {
  char real_folder[PATH_MAX], real_path[PATH_MAX];
  if (!realpath(path, real_path)) return errno == ENOENT || errno == ENOTDIR ? MODULE_ABSENT : MODULE_UNREADABLE;
  if (!realpath(folder, real_folder)) return MODULE_UNREADABLE;
  size_t n = strlen(real_folder);
  if (n > 0 && real_folder[n - 1] == '/') n--;
  if (strncmp(real_folder, real_path, n) != 0 || real_path[n] != '/') return MODULE_OUTSIDE;
  int fd = open(real_path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return MODULE_UNREADABLE;
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || !(*file = fdopen(fd, "rb"))) {
    close(fd);
    return MODULE_UNREADABLE;
  }
  mr_file_opened hook = file_opened;
  if (hook) hook(real_path, (unsigned long long)info.st_dev, (unsigned long long)info.st_ino);
  return MODULE_OPENED;
}

// findmodule(name, env) -> chunk, path. Looks for NAME (dots as folders) + ".lua" in each folder.
static int find_module(lua_State *L) {
  size_t len;
  const char *name = luaL_checklstring(L, 1, &len);
  luaL_checktype(L, 2, LUA_TTABLE);
  if (!valid_module_name(name, len)) {
    lua_pushnil(L);
    lua_pushfstring(L, "invalid module name '%s': use dot-separated identifiers such as 'codec.hex'", name);
    return 2;
  }
  mr_vm *vm = mr_vm_of(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, vm->paths_ref);
  int folders = lua_gettop(L);
  lua_Integer count = (lua_Integer)lua_rawlen(L, folders);
  if (count == 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "module '%s' not found: no policy folders were given", name);
    return 2;
  }
  const char *relative = luaL_gsub(L, name, ".", "/");
  char searched[1024] = "";
  for (lua_Integer i = 1; i <= count; i++) {
    lua_rawgeti(L, folders, i);
    const char *path = lua_pushfstring(L, "%s/%s.lua", lua_tostring(L, -1), relative);
    FILE *file = NULL;
    module_found found = open_module(lua_tostring(L, -2), path, &file);
    if (found == MODULE_OUTSIDE) {
      lua_pushnil(L);
      lua_pushfstring(L,
                      "module '%s': %s is a symbolic link leading out of its policy folder; modules are loaded "
                      "only from inside the folders given",
                      name, path);
      return 2;
    }
    // A module file that is there but cannot be read (a folder, a FIFO, no permission) is named:
    // a module of the same name in a later folder never loads in its place.
    if (found == MODULE_UNREADABLE) {
      lua_pushnil(L);
      lua_pushfstring(L, "cannot read module file %s (not a plain file, or not readable)", path);
      return 2;
    }
    if (!file) {
      size_t used = strlen(searched);
      snprintf(searched + used, sizeof searched - used, "\n\t%s", path);
      lua_pop(L, 2);
      continue;
    }
    size_t source_len = 0;
    const char *source = read_file(L, file, &source_len);
    fclose(file);
    if (!source) {
      lua_pushnil(L);
      lua_pushfstring(L, "cannot read module file %s", path);
      return 2;
    }
    // Named "<folder name>/<module path>.lua": short enough that Lua's messages never truncate it.
    const char *folder = lua_tostring(L, -3);
    const char *slash = strrchr(folder, '/');
    const char *chunkname = lua_pushfstring(L, "@%s/%s.lua", slash && slash[1] ? slash + 1 : folder, relative);
    if (luaL_loadbufferx(L, source, source_len, chunkname, "t") != LUA_OK) {
      lua_pushnil(L);
      lua_insert(L, -2);
      lua_pushboolean(L, 1);
      return 3;
    }
    lua_pushvalue(L, 2);
    if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
    lua_pushstring(L, path);
    return 2;
  }
  lua_pushnil(L);
  lua_pushfstring(L, "module '%s' not found in the policy folders; searched:%s", name, searched);
  return 2;
}

static int gc_count(lua_State *L) {
  lua_pushnumber(L, (lua_Number)lua_gc(L, LUA_GCCOUNT) + (lua_Number)lua_gc(L, LUA_GCCOUNTB) / 1024.0);
  return 1;
}

static int is_tripped(lua_State *L) {
  lua_pushboolean(L, mr_vm_of(L)->tripped != 0);
  return 1;
}

static int null_tostring(lua_State *L) {
  lua_pushliteral(L, "NULL");
  return 1;
}

static int null_index(lua_State *L) {
  return luaL_error(L, "attempt to index NULL (a SQL NULL value) with '%s'", luaL_tolstring(L, 2, NULL));
}

// math.randomseed() with no argument seeds with the VM's fixed seed, so runs repeat.
static int fixed_randomseed(lua_State *L) {
  if (lua_gettop(L) == 0) lua_pushinteger(L, (lua_Integer)mr_vm_of(L)->limits.seed);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// Calls the real library function (upvalue 1) with this call's arguments, then reads the clock: its
// work in C (up to the pattern or instruction price) passes under the count hook.
static int call_real(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  mr_check_clock(L, 1);
  return lua_gettop(L);
}

// Plain text: compared at each position, up to its whole length (a long needle in a long subject
// is length × length).
static double plain_cost(size_t subject_len, size_t plen) {
  return ((double)subject_len + 1.0) * (plen ? (double)plen : 1.0);
}

// The end of the set starting at p[i] (just past "[" and any "^"), just past its "]".
static size_t set_end(const char *p, size_t plen, size_t i) {
  do {
    if (i < plen && p[i] == '%') i++;
    i++;
  } while (i < plen && p[i] != ']');
  return i + 1;
}

// The end of the one item at p[i]: a character, a class (`%a`), a set, a balance (`%b()`), a frontier.
static size_t item_end(const char *p, size_t plen, size_t i) {
  if (p[i] == '%' && i + 1 < plen && p[i + 1] == 'b') return i + 4;
  if (p[i] == '%' && i + 1 < plen && p[i + 1] == 'f') {
    return i + 2 < plen && p[i + 2] == '[' ? set_end(p, plen, i + 3) : i + 2;
  }
  if (p[i] == '%') return i + 2;
  if (p[i] == '[') return set_end(p, plen, i + 1 < plen && p[i + 1] == '^' ? i + 2 : i + 1);
  return i + 1;
}

// Each start position is tried against every item at most once before backtracking: the items'
// total cost (a literal, `.` or `%a` one step, a set `[...]` its length, since each character is
// tested against each of its members) is the work of one try; a try of up to 16 such tests counts as
// one step (the unit the rest of the estimate counts in), a longer one as its share of 16.
double mr_pattern_cost(const char *p, size_t plen, size_t subject_len, int anchored_ok) {
  double n = (double)subject_len + 1.0;
  if (strcspn(p, "^$*+?.([%-") >= plen) return plain_cost(subject_len, plen);
  size_t i = 0;
  int anchored = anchored_ok && plen > 0 && p[0] == '^';
  if (anchored) i = 1;
  int backtracking = 0, pending = 0, optional = 0;
  double width = 0;
  while (i < plen) {
    char c = p[i];
    if (c == '(' || c == ')') {
      i++;
      continue;
    }
    if (c == '$' && i + 1 == plen) {
      backtracking += pending;
      break;
    }
    size_t end = item_end(p, plen, i);
    // A balance scans to its closing character from each place it is tried: the subject's length.
    if (c == '%' && i + 1 < plen && p[i + 1] == 'b') backtracking++;
    width += end - i > 2 ? (double)(end - i) : 1.0;
    i = end;
    backtracking += pending;
    pending = 0;
    if (i < plen && (p[i] == '*' || p[i] == '+' || p[i] == '-')) {
      pending = 1;
      i++;
    } else if (i < plen && p[i] == '?') {
      // Each optional item is a second way to go on: the ways multiply.
      optional++;
      i++;
    }
  }
  double cost = (anchored ? 1.0 : n) * (width > 16.0 ? width / 16.0 : 1.0);
  for (int k = 0; k < backtracking && cost < 1e300; k++) cost *= n;
  for (int k = 0; k < optional && cost < 1e300; k++) cost *= 2;
  return cost;
}

// string.find/match/gmatch/gsub, refused when the pattern's worst case on this subject is too costly:
// pattern matching runs in C, where no instruction count or deadline can stop it.
static int guarded_pattern(lua_State *L) {
  size_t subject_len, pattern_len;
  luaL_checklstring(L, 1, &subject_len);
  const char *pattern = luaL_checklstring(L, 2, &pattern_len);
  int is_find = (int)lua_tointeger(L, lua_upvalueindex(2)) == 1;
  int iterates = (int)lua_tointeger(L, lua_upvalueindex(2)) == 2;
  {
    mr_vm *vm = mr_vm_of(L);
    double cost = is_find && lua_toboolean(L, 4) ? plain_cost(subject_len, pattern_len)
                                                  : mr_pattern_cost(pattern, pattern_len, subject_len, !iterates);
    if (cost > vm->limits.pattern_cost) {
      char message[256];
      snprintf(message, sizeof message,
        "pattern '%.40s' on a %zu-byte string could take ~%.1e steps (limit %.1e): shorten the string, "
        "anchor or simplify the pattern, or use plain find", pattern, subject_len, cost, vm->limits.pattern_cost);
      return mr_trip(L, 1, MR_ERR_INPUT, message);
    }
  }
  return call_real(L);
}

// Charges `steps` of work a C library function is about to do to the instruction budget, before it
// starts: the count hook cannot stop C code, so work that could outlast the limits is paid up front.
static void charge(lua_State *L, double steps, const char *what) {
  mr_vm *vm = mr_vm_of(L);
  if (!vm->armed) return;
  if (steps > (double)vm->instructions_left) {
    char limit[200], message[260];
    mr_instruction_limit_text(vm, limit, sizeof limit);
    snprintf(message, sizeof message, "%s would take ~%.1e steps: %s", what, steps, limit);
    mr_trip(L, 1, MR_ERR_INSTRUCTIONS, message);
  }
  vm->instructions_left -= (int64_t)steps;
}

// string.rep: the result's size is known before any copy; an empty piece repeated is empty at once.
static int guarded_rep(lua_State *L) {
  size_t length, separator = 0;
  luaL_checklstring(L, 1, &length);
  lua_Integer count = luaL_checkinteger(L, 2);
  if (!lua_isnoneornil(L, 3)) luaL_checklstring(L, 3, &separator);
  if (count <= 0 || length + separator == 0) {
    lua_pushliteral(L, "");
    return 1;
  }
  double total = (double)count * (double)(length + separator);
  mr_vm *vm = mr_vm_of(L);
  if (total > (double)vm->limits.memory) {
    char message[200];
    snprintf(message, sizeof message, "string.rep would make a %.3g-byte string: memory limit of %zu bytes exceeded",
      total, vm->limits.memory);
    return mr_trip(L, 1, MR_ERR_MEMORY, message);
  }
  charge(L, total / 64.0, "string.rep");
  return call_real(L);
}

// table.move: one step per element moved.
static int guarded_move(lua_State *L) {
  lua_Integer first = luaL_checkinteger(L, 2), last = luaL_checkinteger(L, 3);
  if (last >= first) charge(L, (double)last - (double)first + 1.0, "table.move");
  return call_real(L);
}

// table.concat: one step per element joined. The range is read once and handed to the real function,
// so a `__len` metamethod is not asked again after the price.
static int guarded_concat(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer first = luaL_optinteger(L, 3, 1);
  lua_Integer last = lua_isnoneornil(L, 4) ? luaL_len(L, 1) : luaL_checkinteger(L, 4);
  if (last >= first) charge(L, (double)last - (double)first + 1.0, "table.concat");
  lua_settop(L, 2);
  lua_pushinteger(L, first);
  lua_pushinteger(L, last);
  return call_real(L);
}

// Lua's own table functions ask `__len` again after the price, and may be told another length: a
// table with a `__len` metamethod is refused by name; a plain list goes to the real function.
static void refuse_len(lua_State *L, const char *what) {
  if (luaL_getmetafield(L, 1, "__len") != LUA_TNIL) {
    luaL_error(L, "%s: the table has a __len metamethod; use a plain list (copy it first)", what);
  }
}

// table.insert with a position moves the elements after it up one place: one step each.
static int guarded_insert(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer end = luaL_intop(+, luaL_len(L, 1), 1);
  if (lua_gettop(L) == 3) {
    lua_Integer position = luaL_checkinteger(L, 2);
    if ((lua_Unsigned)position - 1u < (lua_Unsigned)end) charge(L, (double)end - (double)position, "table.insert");
  }
  refuse_len(L, "table.insert");
  return call_real(L);
}

// table.remove moves the elements after the position down one place: one step each, as insert.
static int guarded_remove(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer size = luaL_len(L, 1);
  lua_Integer position = luaL_optinteger(L, 2, size);
  if (position >= 1 && size > position) charge(L, (double)size - (double)position, "table.remove");
  refuse_len(L, "table.remove");
  return call_real(L);
}

// table.sort: n log n comparisons, each up to the longest string's length when strings are compared.
static int guarded_sort(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  refuse_len(L, "table.sort");
  lua_Integer n = luaL_len(L, 1);
  if (n > 1) {
    charge(L, (double)n, "table.sort");
    size_t longest = 0;
    if (lua_isnoneornil(L, 2)) {
      for (lua_Integer k = 1; k <= n; k++) {
        if (lua_geti(L, 1, k) == LUA_TSTRING) {
          size_t length = lua_rawlen(L, -1);
          if (length > longest) longest = length;
        }
        lua_pop(L, 1);
      }
    }
    double levels = 1.0;
    for (lua_Integer left = n; left > 1; left /= 2) levels += 1.0;
    double comparisons = (double)n * levels;
    charge(L, comparisons * (1.0 + (double)longest / 64.0), "table.sort");
  }
  return call_real(L);
}

// Nested coroutine closes allowed: each one's handlers may close another, deeper in C.
#define MR_MAX_CLOSE_DEPTH 64

// Raises the limit that tripped in this call again, when one did (every later step must fail).
static void reraise_trip(lua_State *L) {
  mr_vm *vm = mr_vm_of(L);
  if (!vm->tripped) return;
  lua_pushstring(L, vm->trip_message);
  lua_error(L);
}

// coroutine.close: after a limit tripped it closes nothing (Lua runs a dead coroutine's pending
// `__close` handlers with hooks off once an error came from a hook, where no limit could stop
// them); nested closes are bounded (each one's handlers may close another, deeper in C).
static int guarded_close(lua_State *L) {
  mr_vm *vm = mr_vm_of(L);
  reraise_trip(L);
  if (vm->close_depth >= MR_MAX_CLOSE_DEPTH) {
    return luaL_error(L, "coroutine.close nested more than %d deep", MR_MAX_CLOSE_DEPTH);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  vm->close_depth++;
  int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  vm->close_depth--;
  if (status != LUA_OK) return lua_error(L);
  reraise_trip(L);
  return lua_gettop(L);
}

// The function coroutine.wrap returns: Lua's own closes the coroutine after an error, which after
// a tripped limit would run its `__close` handlers with hooks off; this one raises the limit instead.
static int wrapped_resume(lua_State *L) {
  lua_State *co = lua_tothread(L, lua_upvalueindex(1));
  int arguments = lua_gettop(L);
  if (lua_status(co) == LUA_OK && lua_gettop(co) == 0) return luaL_error(L, "cannot resume dead coroutine");
  if (!lua_checkstack(co, arguments)) return luaL_error(L, "too many arguments to resume");
  lua_xmove(L, co, arguments);
  int results = 0;
  int status = lua_resume(co, L, arguments, &results);
  if (status == LUA_OK || status == LUA_YIELD) {
    if (!lua_checkstack(L, results + 1)) {
      lua_pop(co, results);
      return luaL_error(L, "too many results to resume");
    }
    lua_xmove(co, L, results);
    return results;
  }
  lua_xmove(co, L, 1);
  reraise_trip(L);
  mr_vm *vm = mr_vm_of(L);
  if (vm->close_depth < MR_MAX_CLOSE_DEPTH) {
    vm->close_depth++;
    int closed = lua_resetthread(co);
    vm->close_depth--;
    if (closed != LUA_OK && closed != LUA_YIELD) {
      lua_pop(L, 1);
      lua_xmove(co, L, 1);
    }
  }
  if (lua_type(L, -1) == LUA_TSTRING) {
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
  }
  return lua_error(L);
}

static int guarded_wrap(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_State *co = lua_newthread(L);
  lua_pushvalue(L, 1);
  lua_xmove(L, co, 1);
  lua_pushcclosure(L, wrapped_resume, 1);
  return 1;
}

static void replace(lua_State *L, int table, const char *name, lua_CFunction guarded) {
  lua_getfield(L, table, name);
  lua_pushcclosure(L, guarded, 1);
  lua_setfield(L, table, name);
}

int mr_host_trampoline(lua_State *L) {
  mr_vm *vm = mr_vm_of(L);
  int32_t id = (int32_t)lua_tointeger(L, lua_upvalueindex(1));
  mr_buf_reset(&vm->host_args);
  int count = lua_gettop(L);
  for (int index = 1; index <= count; index++) mr_read_value(L, index, &vm->host_args, 0);
  mr_buf_reset(&vm->host_out);
  if (vm->host_fn(vm->host, id, &vm->host_args, &vm->host_out) != 0) {
    const mr_val *message = vm->host_out.count ? &vm->host_out.vals[0] : NULL;
    if (vm->hold_refused && message && message->tag == MR_STR) {
      // What the host would hold passes the memory limit: the limit trips, as the allocator's would.
      vm->hold_refused = 0;
      lua_pushlstring(L, vm->host_out.bytes + message->off, message->len);
      return mr_trip(L, 1, MR_ERR_MEMORY, lua_tostring(L, -1));
    }
    if (message && message->tag == MR_STR) {
      mr_where_script(L, 1);
      lua_pushlstring(L, vm->host_out.bytes + message->off, message->len);
      lua_concat(L, 2);
    } else {
      lua_pushliteral(L, "host function failed");
    }
    return lua_error(L);
  }
  mr_check_clock(L, 1);
  return mr_push_values(L, &vm->host_out);
}

static void open_library(lua_State *L, const char *name, lua_CFunction open) {
  luaL_requiref(L, name, open, 1);
  lua_pop(L, 1);
}

static void guard(lua_State *L, int string_table, const char *name, int kind) {
  lua_getfield(L, string_table, name);
  lua_pushinteger(L, kind);
  lua_pushcclosure(L, guarded_pattern, 2);
  lua_setfield(L, string_table, name);
}

static int new_ref_table(lua_State *L) {
  lua_newtable(L);
  return luaL_ref(L, LUA_REGISTRYINDEX);
}

void mr_sandbox_setup(lua_State *L, mr_vm *vm) {
  open_library(L, LUA_GNAME, luaopen_base);
  open_library(L, LUA_TABLIBNAME, luaopen_table);
  open_library(L, LUA_STRLIBNAME, luaopen_string);
  open_library(L, LUA_MATHLIBNAME, luaopen_math);
  open_library(L, LUA_UTF8LIBNAME, luaopen_utf8);
  open_library(L, LUA_COLIBNAME, luaopen_coroutine);
  open_library(L, LUA_OSLIBNAME, luaopen_os);

  // Strings' metatable is shared by every script: hide it.
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 2);

  lua_getglobal(L, LUA_STRLIBNAME);
  int string_table = lua_gettop(L);
  lua_pushnil(L);
  lua_setfield(L, string_table, "dump");
  guard(L, string_table, "find", 1);
  guard(L, string_table, "match", 0);
  guard(L, string_table, "gmatch", 2);
  guard(L, string_table, "gsub", 2);
  replace(L, string_table, "rep", guarded_rep);
  lua_pop(L, 1);

  lua_getglobal(L, LUA_TABLIBNAME);
  replace(L, lua_gettop(L), "move", guarded_move);
  replace(L, lua_gettop(L), "sort", guarded_sort);
  replace(L, lua_gettop(L), "concat", guarded_concat);
  replace(L, lua_gettop(L), "insert", guarded_insert);
  replace(L, lua_gettop(L), "remove", guarded_remove);
  lua_pop(L, 1);

  lua_getglobal(L, LUA_COLIBNAME);
  replace(L, lua_gettop(L), "close", guarded_close);
  lua_pushcfunction(L, guarded_wrap);
  lua_setfield(L, -2, "wrap");
  lua_pop(L, 1);

  lua_getglobal(L, LUA_MATHLIBNAME);
  lua_getfield(L, -1, "randomseed");
  lua_pushvalue(L, -1);
  lua_pushinteger(L, (lua_Integer)vm->limits.seed);
  lua_call(L, 1, 0);
  lua_pushcclosure(L, fixed_randomseed, 1);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);

  // Nothing that reaches files, processes or bytecode stays in the real globals either.
  static const char *const removed[] = {"load", "loadfile", "dofile", "collectgarbage", "print", NULL};
  for (const char *const *name = removed; *name; name++) {
    lua_pushnil(L);
    lua_setglobal(L, *name);
  }
  lua_getglobal(L, LUA_OSLIBNAME);
  static const char *const os_removed[] = {"execute", "exit", "getenv", "remove", "rename", "tmpname", "setlocale", NULL};
  for (const char *const *name = os_removed; *name; name++) {
    lua_pushnil(L);
    lua_setfield(L, -2, *name);
  }
  lua_pop(L, 1);

  lua_newuserdatauv(L, 0, 0);
  luaL_newmetatable(L, "NULL");
  lua_pushcfunction(L, null_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushcfunction(L, null_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, null_index);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  vm->null_ref = luaL_ref(L, LUA_REGISTRYINDEX);

  vm->hostlibs_ref = new_ref_table(L);
  vm->base_ref = new_ref_table(L);
  vm->paths_ref = new_ref_table(L);

  if (luaL_loadbufferx(L, bootstrap, sizeof bootstrap - 1, "=sandbox", "t") != LUA_OK) lua_error(L);
  lua_pushglobaltable(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, vm->null_ref);
  lua_rawgeti(L, LUA_REGISTRYINDEX, vm->hostlibs_ref);
  lua_rawgeti(L, LUA_REGISTRYINDEX, vm->base_ref);
  lua_pushcfunction(L, find_module);
  lua_pushcfunction(L, gc_count);
  lua_pushcfunction(L, is_tripped);
  lua_call(L, 7, 1);
  vm->make_env_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}
