// migrun's C shim over Lua 5.4. Every function that can raise a Lua error (longjmp) runs here,
// inside a protected call; Swift only calls the mr_* functions below, which never raise.
// Values cross the boundary as a flat, pre-order list of mr_val records (see mr_buf).
#ifndef MIGRUN_CLUASHIM_H
#define MIGRUN_CLUASHIM_H

#include <stddef.h>
#include <stdint.h>

/// The kind of one value in an mr_buf.
typedef enum mr_tag {
  MR_NIL = 0,
  MR_FALSE = 1,
  MR_TRUE = 2,
  MR_INT = 3,    ///< i
  MR_NUM = 4,    ///< d
  MR_STR = 5,    ///< bytes[off ..< off+len]
  MR_TABLE = 6,  ///< followed by `count` key/value pairs, each a value tree
  MR_NULL = 7,   ///< the sandbox's NULL (SQL NULL)
  MR_FUNC = 8,   ///< i: a registry reference owned by the host (release with mr_vm_unref)
} mr_tag;

typedef struct mr_val {
  int32_t tag;
  int32_t count;
  int64_t i;
  double d;
  size_t off;
  size_t len;
} mr_val;

/// A growable list of values plus the bytes of their strings. Owned by whoever made it.
typedef struct mr_buf {
  mr_val *vals;
  size_t count, cap;
  char *bytes;
  size_t blen, bcap;
  /// Bytes the buffer may hold (records and string bytes), 0 for no bound: values crossing between
  /// a script and the host count against the VM's memory limit (a table sharing subtables is copied
  /// once per reference).
  size_t limit;
} mr_buf;

/// How a call ended.
typedef enum mr_status {
  MR_OK = 0,
  MR_ERR_SYNTAX = 1,
  MR_ERR_RUNTIME = 2,
  MR_ERR_INSTRUCTIONS = 3,
  MR_ERR_MEMORY = 4,
  MR_ERR_DEADLINE = 5,
  MR_ERR_RECURSION = 6,
  MR_ERR_INPUT = 7,  ///< a built-in refused input whose worst case is too costly (pattern matching)
  MR_ERR_VALUE = 8,  ///< a value that cannot cross to the host (a coroutine, a cyclic table…)
  MR_ERR_FILE = 9,   ///< a script file that cannot be read
} mr_status;

typedef struct mr_limits {
  int64_t instructions;   ///< VM instructions per call (checked every `hook_step`)
  size_t memory;          ///< bytes the whole VM may hold
  int32_t call_depth;     ///< Lua call levels per call
  double seconds;         ///< wall-clock seconds per call
  double pattern_cost;    ///< worst-case steps a pattern match may take
  int64_t seed;           ///< math.random seed
  /// What a call earns for each object the host hands it (mr_vm_credit): instructions added to its
  /// budget, and seconds added to its whole run's time. A call handed objects may also run
  /// `seconds` at most after the last object it was handed (time without progress).
  int64_t instructions_per_object;
  double seconds_per_object;
} mr_limits;

/// The host's functions, called from Lua. Arguments are in `args`; results go to `out`.
/// Returns 0, or non-zero with one MR_STR in `out` holding the error message.
typedef int (*mr_host_fn)(void *host, int32_t fn_id, const mr_buf *args, mr_buf *out);

typedef struct mr_vm mr_vm;

/// A new sandboxed VM, or NULL when out of memory.
mr_vm *mr_vm_new(const mr_limits *limits, mr_host_fn host_fn, void *host);
void mr_vm_free(mr_vm *vm);
/// Sets the pointer handed to the host function (when it was not known at mr_vm_new).
void mr_vm_set_host(mr_vm *vm, void *host);
void mr_vm_set_limits(mr_vm *vm, const mr_limits *limits);
/// The host holds `bytes` more (or, negative, fewer) for the scripts (a stage's selected keys):
/// counted against the memory limit with the state's own. Returns 0, or -1 (nothing held) when the
/// limit would be passed; the host function that asked then fails as the memory limit.
int mr_vm_hold(mr_vm *vm, int64_t bytes);
/// The call under way was handed `objects` new objects by the host (a stage's walk, a fetch): its
/// budget grows by `instructions_per_object` and `seconds_per_object` each, and its time without
/// progress starts again. No effect outside a call, or for `objects` <= 0.
void mr_vm_credit(mr_vm *vm, int64_t objects);
/// Adds a folder that `require` searches (in the order added).
mr_status mr_vm_add_module_path(mr_vm *vm, const char *folder);

// Told of every module file `require` opens (its real path, device and inode), process-wide: the
// host notes it as one of the command's inputs, never to be written over. Set once; NULL: no one.
typedef void (*mr_file_opened)(const char *path, unsigned long long device, unsigned long long inode);
void mr_set_file_opened(mr_file_opened hook);
/// Makes host function `fn_id` callable as `module.name`, or as the global `name` when module is NULL.
mr_status mr_vm_register(mr_vm *vm, const char *module, const char *name, int32_t fn_id);
/// Runs a chunk of Lua text in a fresh environment; its results go to `out`.
mr_status mr_vm_run(mr_vm *vm, const char *source, size_t len, const char *chunkname, mr_buf *out);
/// Calls the function `ref` (an MR_FUNC) with the top-level values of `args`; results go to `out`.
mr_status mr_vm_call(mr_vm *vm, int64_t ref, const mr_buf *args, mr_buf *out);
/// Calls field `field` of the table `ref` (method-free: no self), as mr_vm_call.
mr_status mr_vm_call_field(mr_vm *vm, int64_t ref, const char *field, const mr_buf *args, mr_buf *out);
/// Interns the strings of `names` as a key list for mr_vm_call_row; *ref receives its reference.
mr_status mr_vm_keys(mr_vm *vm, const mr_buf *names, int64_t *ref);
/// Calls function `ref` with one table built from `values` under the keys `in_keys` (by position),
/// and reads the fields `out_keys` of the table it returns into `out` (by position; nil when absent).
/// A function that returns nothing leaves `out` empty.
mr_status mr_vm_call_row(mr_vm *vm, int64_t ref, int64_t in_keys, const mr_buf *values, int64_t out_keys, mr_buf *out);
void mr_vm_unref(mr_vm *vm, int64_t ref);

/// How a source column becomes a Lua value in mr_vm_row_loop (the attribute's type decides, as the
/// host's own conversion does: a boolean INTEGER is 0 or 1, a REAL of an integer type that holds a
/// whole number an integer, a date or double always a float, text and BLOBs strings).
typedef enum mr_in_kind {
  MR_IN_INT = 0,    ///< Integer 16/32/64
  MR_IN_BOOL = 1,
  MR_IN_REAL = 2,   ///< Double, Float, Decimal (the text "NaN" is NaN)
  MR_IN_DATE = 3,
  MR_IN_TEXT = 4,   ///< String, URI
  MR_IN_BYTES = 5,  ///< Binary, Transformable, UUID
  MR_IN_OTHER = 6,
} mr_in_kind;

/// How a Lua value is bound for a destination attribute in mr_vm_row_loop; a value that does not
/// fit is handed to the host (MR_LOOP_OUTPUTS), whose conversion decides (and words the error).
typedef enum mr_out_kind {
  MR_OUT_INT = 0,    ///< an integer or a float holding a whole number (Integer 64)
  MR_OUT_BOOL = 1,   ///< a boolean or an integer (0 is false)
  MR_OUT_REAL = 2,   ///< a number (Double, Float, Decimal); a NaN as the text NaN
  MR_OUT_TEXT = 3,   ///< a UTF-8 string
  MR_OUT_UUID = 4,   ///< a string of 16 bytes
  MR_OUT_BLOB = 5,   ///< a string
  MR_OUT_INT16 = 6,  ///< as MR_OUT_INT, within -32768…32767
  MR_OUT_INT32 = 7,  ///< as MR_OUT_INT, within Int32's range
  MR_OUT_DATE = 8,   ///< a number that is not NaN (Date)
} mr_out_kind;

/// Why mr_vm_row_loop returned.
typedef enum mr_loop_stop {
  MR_LOOP_DONE = 0,     ///< the select has no more rows
  MR_LOOP_LIMIT = 1,    ///< `limit` rows done (the host reports progress and calls again)
  MR_LOOP_ROW = 2,      ///< the select is on a row whose inputs the host converts: it does the whole row
  MR_LOOP_OUTPUTS = 3,  ///< the function's results (in `out`, by position) are the host's to convert,
                        ///< bind after the plain columns (already bound) and insert
  MR_LOOP_SELECT = 4,   ///< the select failed (sqlite3_errmsg of its connection tells why)
  MR_LOOP_INSERT = 5,   ///< the insert of the row *failed_pk failed, left unreset (sqlite3_errmsg tells why)
} mr_loop_stop;

/// A bulk copy's row loop, run in C: steps `select` (a sqlite3_stmt *; column 0 is Z_PK, the first
/// `plain` columns are bound unchanged to the insert's first parameters, the next `inputs` columns
/// are the function's inputs after `__pk`), calls function `ref` with one table of them under
/// `in_keys` (as mr_vm_call_row), binds the values it returns (one per `out_keys` key, in that order)
/// after the plain values and steps `insert` (a sqlite3_stmt *) — each call under the limits, as
/// mr_vm_call.
/// The inserts run on a second thread, a bounded queue of rows between (the insert's connection is
/// used by that thread alone meanwhile; the select's must be another connection or not written).
/// Returns at `limit` rows or at a row the host must finish, every row before it inserted; *rows
/// counts the rows inserted; *stop says why it returned. A Lua error or limit is the status, as
/// for mr_vm_call.
mr_status mr_vm_row_loop(
  mr_vm *vm, int64_t ref, int64_t in_keys, int64_t out_keys, void *select, void *insert, int32_t plain,
  const int8_t *input_kinds, int32_t inputs, const int8_t *output_kinds, int32_t outputs, int64_t limit,
  int64_t *rows, int32_t *stop, int64_t *failed_pk, mr_buf *out);
/// The last error's message (with "chunk:line:" where Lua gave one) and traceback.
const char *mr_vm_error(const mr_vm *vm);
const char *mr_vm_traceback(const mr_vm *vm);
/// Bytes the VM holds now.
size_t mr_vm_memory(const mr_vm *vm);
/// Runs a full garbage collection.
void mr_vm_collect(mr_vm *vm);

/// Line coverage of every VM of the process (`migrun test --coverage`): while on, each line a
/// script runs is counted by script name and line.
void mr_coverage_enable(int on);
void mr_coverage_reset(void);
size_t mr_coverage_size(void);
/// Entry `index`: the script's name (copied into `source`), the line and its count; 0 past the end.
int mr_coverage_entry(size_t index, char *source, size_t source_size, int32_t *line, int64_t *count);

void mr_buf_reset(mr_buf *buf);
void mr_buf_free(mr_buf *buf);
/// Appends a value; for MR_STR copies `len` bytes from `bytes`. Returns 0, -1 when out of memory,
/// or -2 when the buffer's `limit` would be passed.
int mr_buf_add(mr_buf *buf, int32_t tag, int32_t count, int64_t i, double d, const void *bytes, size_t len);

/// Worst-case step estimate for matching `pattern` against a subject of `subject_len` bytes (exposed
/// for tests). `anchored_ok` is 0 for gmatch/gsub-style iteration.
double mr_pattern_cost(const char *pattern, size_t plen, size_t subject_len, int anchored_ok);

#endif
