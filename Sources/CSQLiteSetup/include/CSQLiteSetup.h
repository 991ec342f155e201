// Process-wide SQLite settings, made before the first connection opens (sqlite3_config is variadic:
// Swift cannot call it).
#ifndef MIGRUN_CSQLITESETUP_H
#define MIGRUN_CSQLITESETUP_H

/// Turns off SQLite's memory statistics (SQLITE_CONFIG_MEMSTATUS 0): every sqlite3_malloc and free
/// otherwise takes one global mutex to count bytes — a lock all threads share, the row loop's
/// reader and writer among them. Returns 0 when set, nonzero when SQLite was already initialized
/// (the setting is then left as it was).
int mr_sqlite_memory_statistics_off(void);

#endif
