// The system zlib (Debian: zlib1g-dev), for Z_MODELCACHE's raw DEFLATE.
#include <zlib.h>
