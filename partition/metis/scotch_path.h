// scotch.h as the compiler's include path finds it (CGO_CFLAGS, CPATH as
// environment modules set it, or the -I$SCOTCH_DIR/include that
// scripts/buildenv.sh adds), else under include/scotch/, where Debian's and
// Ubuntu's libscotch-dev install it.
#if __has_include(<scotch.h>)
#include <scotch.h>
#elif __has_include(<scotch/scotch.h>)
#include <scotch/scotch.h>
#else
#error "scotch.h not found: set SCOTCH_DIR (make build) or CGO_CFLAGS=-I<PT-Scotch prefix>/include (docs/INSTALL.md)"
#endif
