#!/bin/sh
# The hp_sys boundary (include/hp/sys.h): no C file under src/ but the real
# table (src/util/sys.c, sys-proc.c, sys-tls.c) opens files, starts
# processes, connects, or reads the clock or the environment itself; the
# few exceptions sys.h lists are allowed by file and call
# (tests/e2e/sys_boundary.py). A planted call shows the check can fail.
T=t0060-sys-boundary
. "$(dirname "$0")/e2e-lib.sh"

python3 "$ROOT/tests/e2e/sys_boundary.py" "$ROOT/src" >"$e2e_tmp/out" 2>&1
expect_status "src/ reaches the outside world only through hp_sys" 0 $?
check "nothing listed" test ! -s "$e2e_tmp/out"

mkdir -p "$e2e_tmp/src/util" "$e2e_tmp/src/collect"
cat >"$e2e_tmp/src/collect/planted.c" <<'C'
/* fopen( in a comment and "getenv(" in a string are not calls. */
#include <stdio.h>
static const char *s = "getenv(HOME)";
FILE *planted(void) { return fopen("/etc/hostname", "r"); }
long when(void) { return (long)time(NULL) + (s != 0); }
int opener(struct x *io) { return io->open(io) + ops.open(); }
C
printf 'int real(void) { return fork(); }\n' >"$e2e_tmp/src/util/sys.c"
python3 "$ROOT/tests/e2e/sys_boundary.py" "$e2e_tmp/src" >"$e2e_tmp/out" 2>&1
expect_status "a planted call fails the check" 1 $?
check "the planted calls are named, nothing else" sh -c \
	'[ "$(cat "$1")" = "$(printf "collect/planted.c:4: fopen\ncollect/planted.c:5: time")" ]' _ "$e2e_tmp/out"
e2e_done
