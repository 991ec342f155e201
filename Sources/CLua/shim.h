// Debian's liblua5.4 (package liblua5.4-dev), found with pkg-config `lua5.4`.
// Only CLuaShim includes it: Swift code never calls the Lua API directly.
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
