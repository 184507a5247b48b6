#!/bin/sh
# Hostile input on the command line and in files (no fixture needed): echoed
# arguments never carry an escape sequence to the terminal, URL userinfo is
# never printed, --snapshot refuses FIFOs, devices and huge files at once,
# and --save-snapshot writes 0600, atomically, never through a symlink.
T=t0340-hostile-input
. "$(dirname "$0")/e2e-lib.sh"

run() { "$HPNODE" "$@" >"$e2e_tmp/out" 2>"$e2e_tmp/err"; echo $?; }
esc=$(printf '\033')
bel=$(printf '\007')
# no_control FILE: not one ESC, BEL or other C0 control (bar LF) in FILE.
no_control() { ! LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177]')" "$1"; }
export AWS_EC2_METADATA_DISABLED=true

expect_status "escape sequence in --cluster exits 2" 2 "$(run triage --cluster "x${esc}[2J" --region us-west-2)"
check "--cluster is echoed without its escape sequence" no_control "$e2e_tmp/err"
check "--cluster is still named" contains "$e2e_tmp/err" "(got 'x?[2J')"
expect_status "OSC title in an unknown option exits 2" 2 "$(run triage --cluster c "--x${esc}]0;pwned${bel}")"
check "unknown option: no control character" no_control "$e2e_tmp/err"
expect_status "escape in --output value exits 2" 2 "$(run triage --cluster c --output "j${esc}[31m")"
check "--output value: no control character" no_control "$e2e_tmp/err"
expect_status "escape in an unknown command exits 2" 2 "$(run "tri${esc}[1Aage")"
check "unknown command: no control character" no_control "$e2e_tmp/err"
expect_status "escape in node --timeout exits 2" 2 "$(run node --timeout "5${esc}[2J")"
check "node usage error: no control character" no_control "$e2e_tmp/err"
expect_status "escape in explain section exits 2" 2 "$(run explain "Z${esc}[2J")"
check "explain: no control character" no_control "$e2e_tmp/err"
expect_status "escape in a snapshot path exits 1" 1 "$(run triage --snapshot "$e2e_tmp/n${esc}[2Jo.json")"
check "file error: no control character" no_control "$e2e_tmp/err"

# URL userinfo: never printed, in any error.
HOME=$e2e_tmp AWS_CONFIG_FILE=$e2e_tmp/none AWS_SHARED_CREDENTIALS_FILE=$e2e_tmp/none \
	AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=x AWS_MAX_ATTEMPTS=1 \
	"$HPNODE" triage --cluster c --region us-west-2 \
	--endpoint-url 'http://admin:s3cr3t-pw@127.0.0.1:9' >"$e2e_tmp/out" 2>"$e2e_tmp/err"
expect_status "unreachable endpoint with userinfo exits 1" 1 $?
check "cannot-reach error names the host" contains "$e2e_tmp/err" "127.0.0.1:9"
check "cannot-reach error hides the password" lacks "$e2e_tmp/err" "s3cr3t-pw"
check "cannot-reach error hides the user" lacks "$e2e_tmp/err" "admin"
HOME=$e2e_tmp AWS_CONFIG_FILE=$e2e_tmp/none AWS_SHARED_CREDENTIALS_FILE=$e2e_tmp/none \
	AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=x \
	"$HPNODE" triage --cluster c --region us-west-2 \
	--endpoint-url "ftp://admin:s3cr3t-pw@host${esc}[2J" >"$e2e_tmp/out" 2>"$e2e_tmp/err"
expect_status "invalid endpoint URL exits 2" 2 $?
check "invalid endpoint URL: password hidden" lacks "$e2e_tmp/err" "s3cr3t-pw"
check "invalid endpoint URL: no control character" no_control "$e2e_tmp/err"

# --snapshot on things that are not snapshot files: refused at once.
mkfifo "$e2e_tmp/fifo"
start=$(date +%s)
got=$(cd "$e2e_tmp" && timeout 20 "$HPNODE" triage --snapshot fifo >out 2>err; echo $?)
expect_status "--snapshot on a FIFO exits 1 (no wait)" 1 "$got"
check "FIFO: not a regular file" contains "$e2e_tmp/err" "not a regular file"
expect_status "--snapshot /dev/zero exits 1" 1 "$(run triage --snapshot /dev/zero)"
check "/dev/zero: not a regular file" contains "$e2e_tmp/err" "not a regular file"
expect_status "node --snapshot /dev/urandom exits 1" 1 "$(run node --snapshot /dev/urandom)"
check "/dev/urandom: not a regular file" contains "$e2e_tmp/err" "not a regular file"
truncate -s 5G "$e2e_tmp/sparse.json"
expect_status "--snapshot on a 5 GB sparse file exits 1" 1 "$(run triage --snapshot "$e2e_tmp/sparse.json")"
check "sparse file: refused by its size" contains "$e2e_tmp/err" "is larger than 4096 MB"
# A file just under the cap is not refused by its size: read, it is not JSON (at once).
truncate -s 4G "$e2e_tmp/sparse4.json"
expect_status "--snapshot on a 4 GB file of zeros exits 1" 1 "$(run triage --snapshot "$e2e_tmp/sparse4.json")"
check "4 GB of zeros: not JSON, from its first byte" contains "$e2e_tmp/err" "is not valid JSON (near byte 0)"
took=$(( $(date +%s) - start ))
# A read that blocked (a FIFO, a device) would hang: the bound only tells a hang from a refusal.
check "hostile snapshot files refused without hanging (took ${took} s)" test "$took" -le 60

# --save-snapshot: 0600 even under umask 022, atomic, never through a symlink.
expect_status "node saves a snapshot" 0 "$( (umask 022; run node --output json --save-snapshot "$e2e_tmp/s.json") )"
check "saved snapshot is mode 600" test "$(stat -c %a "$e2e_tmp/s.json")" = 600
check "no temporary file is left" test "$(ls -A "$e2e_tmp" | grep -c '^\.s\.json')" = 0
expect_status "saved snapshot replays" 0 "$(run triage --snapshot "$e2e_tmp/s.json")"
echo precious >"$e2e_tmp/victim"
ln -s "$e2e_tmp/victim" "$e2e_tmp/link.json"
expect_status "saving through a symlink exits 1" 1 "$(run node --output json --save-snapshot "$e2e_tmp/link.json")"
check "symlink: explained" contains "$e2e_tmp/err" "symbolic link"
check "symlink target untouched" test "$(cat "$e2e_tmp/victim")" = precious
check "symlink left as it was" test -L "$e2e_tmp/link.json"
e2e_done
