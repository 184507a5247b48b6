# Helpers for the end-to-end scripts (POSIX sh). Source after setting T
# (the script's name); each check prints "ok - $T: what" or
# "not ok - $T: what: why", and e2e_done exits non-zero if any failed.
#   ROOT      the repository root
#   HPNODE    the binary under test (set by `make test`)
#   e2e_tmp   a scratch directory removed at exit
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
: "${HPNODE:=$ROOT/hpnode}"
e2e_failed=0
e2e_tmp=$(mktemp -d "${TMPDIR:-/tmp}/hpnode-e2e.XXXXXX")
# What the script's children make in TMPDIR (fixture servers, fake tools, a
# session killed mid-way) goes with the scratch directory.
TMPDIR=$e2e_tmp
export TMPDIR
FIXTURE_LIB_DIR=$ROOT/tests/fixtures
. "$ROOT/tests/fixtures/lib.sh"
trap 'fixture_stop; rm -rf "$e2e_tmp"' EXIT
trap 'exit 130' INT TERM
# Keep the user's own AWS setup out of every run.
unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL AWS_REGION \
	AWS_DEFAULT_REGION AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY NO_COLOR
# The guides print in English unless a test asks for Japanese (explain --lang, a ja_* locale).
unset LC_ALL LC_MESSAGES LANGUAGE
export LANG=C TZ=UTC

ok() { echo "ok - $T: $1"; }
not_ok() {
	echo "not ok - $T: $1: $2"
	e2e_failed=1
}

# check WHAT COMMAND...: ok when COMMAND succeeds; its output is shown on failure.
check() {
	what=$1
	shift
	if out=$("$@" 2>&1); then
		ok "$what"
	else
		not_ok "$what" "$(printf '%s' "$out" | head -c 1500 | tr '\n' '|')"
	fi
}

# expect_status WHAT WANT GOT
expect_status() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "exit status $3, expected $2"; fi
}

# findings FILE EXPECT...: see findings.py
findings() {
	python3 "$ROOT/tests/e2e/findings.py" "$@"
}

# contains FILE TEXT / lacks FILE TEXT
contains() { grep -qF -- "$2" "$1"; }
lacks() { ! grep -qF -- "$2" "$1"; }

# variant BASE.yaml OUT.yaml PYTHON: writes BASE with the python statements
# applied to its parsed document `d` (e.g. d["faults"] = {"deny": [...]}).
# BASE is read as the fixture server reads it (its !include parts read in), so
# OUT stands alone wherever it is written.
variant() {
	python3 - "$ROOT/tests/fixtures" "$1" "$2" "$3" <<'PY'
import sys, yaml
sys.path.insert(0, sys.argv[1])
from hpfixture.spec import read_yaml
d = read_yaml(sys.argv[2])
exec(sys.argv[4])
yaml.safe_dump(d, open(sys.argv[3], "w"), sort_keys=False)
PY
}

# fake_tool SCRIPT.py DEST: DEST runs SCRIPT with this machine's python3
# resolved once, so hpnode's own time limit on the tool (10 s for
# session-manager-plugin --version) is not spent in a version manager's
# shim on a busy machine: the real tools are native programs.
fake_tool() {
	py=$(python3 -c 'import sys; print(sys.executable)') || return 1
	printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$py" "$1" >"$2" && chmod +x "$2"
}

e2e_done() {
	exit "$e2e_failed"
}
