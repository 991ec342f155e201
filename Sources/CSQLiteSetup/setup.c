// Process-wide SQLite settings (see CSQLiteSetup.h).
#include "CSQLiteSetup.h"
#include <sqlite3.h>

int mr_sqlite_memory_statistics_off(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK ? 0 : 1; }
