#!/bin/sh
# The on-node NCCL probe (src/collect/probe/nccl-probe.sh, as embedded) in the sandboxes of
# tests/fixtures/nccl-demo.yaml's nodes, decoded by hpnode's NCCL decoders
# (tests/bin/nccl-facts): a healthy and a broken p5 node give their facts, a
# CPU node gives unknowns rather than health, a non-root run marks the
# privileged reads unreadable, a hung tool is cut, the node's files are left
# as they were, and no secret of a process environment is printed.
T=t0513-nccl-probe-sandbox
. "$(dirname "$0")/e2e-lib.sh"

FACTS=${NCCL_FACTS:-$(dirname "$SIGV4_SIGN")/nccl-facts}
[ -x "$FACTS" ] || FACTS=$ROOT/tests/bin/nccl-facts
if [ ! -x "$FACTS" ]; then
	not_ok "the nccl-facts test tool is built" "$FACTS is missing (make)"
	e2e_done
fi
# The script the binary carries (nccl-probe.sh with frame.sh put in).
"$FACTS" --script >"$e2e_tmp/nccl-probe.sh"
check "the embedded probe is the script with its framing" grep -q '^block() {' "$e2e_tmp/nccl-probe.sh"
if command -v shellcheck >/dev/null 2>&1; then
	check "the probe passes shellcheck as POSIX sh" \
		shellcheck -s sh -S warning "$e2e_tmp/nccl-probe.sh"
fi
check "the probe parses as POSIX sh (dash -n)" sh -n "$e2e_tmp/nccl-probe.sh"
python3 "$ROOT/tests/e2e/nccl_probe_test.py" "$T" "$ROOT/tests/fixtures/nccl-demo.yaml" \
	"$e2e_tmp/nccl-probe.sh" "$FACTS" || e2e_failed=1
e2e_done
