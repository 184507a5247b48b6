#!/bin/sh
# The reference guide and the issue catalog quote only finding texts that
# hpnode prints: every text they attribute to hpnode is found among the
# string literals of src/ (tests/e2e/guide_quotes.py says how).
T=t0610-guide-quotes
. "$(dirname "$0")/e2e-lib.sh"

check "every finding text the guide and the catalog quote is one hpnode prints" \
	python3 "$ROOT/tests/e2e/guide_quotes.py" "$ROOT"
CAT=$ROOT/references/node-issue-catalog.md
DOC=$ROOT/references/node-diagnostics-detail.md
# § N: the boot line "NMI watchdog: Enabled" is no fault; the catalog must not route it to § N.1.
check "the catalog routes no bare 'NMI watchdog' to § N.1" sh -c \
	'! grep "§ N.1" "$1" | grep -q "\`NMI watchdog\`,"' _ "$CAT"
# § J.2's command holds one group: its text must not claim it covers every group.
check "§ J.2 says its template holds only the finding's group" \
	contains "$DOC" "The list below holds only the finding's group"
e2e_done
