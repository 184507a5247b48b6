# hpnode — plain Makefile. `make` builds ./hpnode and tests/bin/sigv4-sign;
# `make test` runs every test tier; `make SANITIZE=address,undefined test`
# does the same under ASan+UBSan in build/san/. `make CC=clang` builds with
# clang (build/clang/); `make fuzz` runs the libFuzzer targets (tests/fuzz/).

CC      ?= cc
PKGS    := libcurl libcrypto libcjson yaml-0.1 expat
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN := -Wall -Wextra -Werror -pedantic -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wold-style-definition -Wwrite-strings -Wformat=2 \
	-Wformat-security -Wpointer-arith -Wvla -Wundef -fno-common
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_DEFAULT_SOURCE -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude -I$(BUILD)/gen $(PKG_CFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -lutil -lm -pthread

# gcc builds go to build/default (./hpnode) and build/san (build/tsan for
# SANITIZE=thread); clang builds (`make CC=clang`) to build/clang and
# build/clang-san (build/clang-tsan), binary included.
IS_CLANG := $(if $(findstring clang,$(shell $(CC) --version 2>/dev/null | head -n 1)),1,)

ifdef FUZZ
# Set by `make fuzz`: libFuzzer instrumentation with ASan+UBSan (clang).
BUILD   := build/fuzz
ALL_CFLAGS += -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
HPNODE  := $(BUILD)/hpnode
TOOLBIN := $(BUILD)/bin
else ifdef SANITIZE
# SANITIZE=thread (TSan cannot be combined with ASan) builds apart, in build/tsan.
BUILD   := build/$(if $(IS_CLANG),clang-,)$(if $(filter thread,$(SANITIZE)),tsan,san)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-sanitize-recover=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
HPNODE  := $(BUILD)/hpnode
TOOLBIN := $(BUILD)/bin
else ifdef IS_CLANG
BUILD   := build/clang
HPNODE  := $(BUILD)/hpnode
TOOLBIN := $(BUILD)/bin
else
BUILD   := build/default
HPNODE  := hpnode
TOOLBIN := tests/bin
endif

LIB_SRC   := $(sort $(filter-out src/cli/main.c,$(shell find src -name '*.c')))
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC  := $(sort $(wildcard tests/unit/test-*.c))
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/unit/%)
# The command table and dispatch of src/cli/main.c, built without main(), so
# the unit tests run commands through the real table (tests/unit/test-cli.c).
CLI_MAIN_TEST := $(BUILD)/tests/unit/cli-main.o
UNIT_SUPPORT := $(BUILD)/tests/unit/t.o $(BUILD)/tests/unit/fake-sys.o $(CLI_MAIN_TEST)
TOOLS     := $(TOOLBIN)/sigv4-sign $(TOOLBIN)/nccl-facts $(TOOLBIN)/nccl-collect
# Fuzz targets (tests/fuzz/fuzz-NAME.c): each also builds as a corpus
# replay test, unit/test-fuzz-NAME, with any compiler.
FUZZ_NAMES := $(sort $(patsubst tests/fuzz/fuzz-%.c,%,$(wildcard tests/fuzz/fuzz-*.c)))
FUZZ_SUPPORT := $(BUILD)/tests/fuzz/common.o $(BUILD)/tests/unit/fake-sys.o
REPLAY_BIN := $(FUZZ_NAMES:%=$(BUILD)/unit/test-fuzz-%)
FUZZ_TIME ?= 30
FUZZ_TARGETS ?= $(FUZZ_NAMES)
GEN       := $(BUILD)/gen/hp_refdoc.h $(BUILD)/gen/hp_probe.h $(BUILD)/gen/hp_slurm_probe.h \
	$(BUILD)/gen/hp_checks.h \
	$(BUILD)/gen/hp_nccl_probe.h $(BUILD)/gen/hp_completion.h

# Every C file built, its object and its dependency file. Objects are kept
# between runs (no intermediate-file cleanup after the tests).
ALL_C     := $(LIB_SRC) src/cli/main.c $(sort $(wildcard tests/unit/*.c tests/fuzz/*.c tests/tools/*.c))
ALL_DEP   := $(ALL_C:%.c=$(BUILD)/%.d) $(CLI_MAIN_TEST:.o=.d)
.SECONDARY: $(ALL_C:%.c=$(BUILD)/%.o)

.PHONY: FORCE install uninstall all deps test test-run quick unit demo demo-run nccl-demo nccl-demo-run bench clean check-deps fuzz fuzz-build golden golden-capture
all: $(HPNODE) $(TOOLS)

check-deps:
	@pkg-config --exists $(PKGS) || { echo "missing libraries: run 'make deps' (Debian: libcurl4-openssl-dev libssl-dev libcjson-dev libyaml-dev libexpat1-dev)"; exit 1; }

# Installs the Debian packages the build and the tests need (root or sudo).
DEB_PKGS := build-essential pkg-config libcurl4-openssl-dev libssl-dev libcjson-dev \
	libyaml-dev libexpat1-dev curl clang libclang-rt-14-dev groff man-db zsh libxml2-utils
deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update && $$SUDO apt-get install -y --no-install-recommends $$missing; \
	else echo "all Debian packages present"; fi
	@command -v python3 >/dev/null 2>&1 && python3 -c 'import moto, boto3, botocore, yaml' 2>/dev/null || \
		echo "note: the fixture server needs python3 with moto 5.2.x, boto3 and PyYAML (pip install 'moto[server]==5.2.1' boto3 pyyaml)"

# The guides the binary carries (explain, --suggest, the bundle); the other
# documents under references/ are installed, not built in.
# The Japanese guides (references/ja/) are built in as "ja/<name>", each one
# that is there: `explain --lang ja` falls back to English for one that is not.
REFGUIDES := references/nccl-diagnostics-detail.md references/node-diagnostics-detail.md \
	     references/node-issue-catalog.md $(sort $(wildcard references/ja/*.md))
$(BUILD)/gen/hp_refdoc.h: $(REFGUIDES) tests/tools/embed.sh
	@mkdir -p $(dir $@)
	sh tests/tools/embed.sh $@ $(REFGUIDES)

# The on-node probes as they travel: frame.sh put in at their "#@include frame.sh" line.
$(BUILD)/gen/probe/%.sh: src/collect/probe/%.sh src/collect/probe/frame.sh
	@mkdir -p $(dir $@)
	sed -e '/^#@include frame.sh$$/{r src/collect/probe/frame.sh' -e 'd;}' $< >$@.tmp
	mv $@.tmp $@

$(BUILD)/gen/hp_probe.h: $(BUILD)/gen/probe/probe.sh tests/tools/embed.sh
	@mkdir -p $(dir $@)
	sh tests/tools/embed.sh $@ $(BUILD)/gen/probe/probe.sh

# The on-node NCCL probe script, carried by the binary (src/collect/probe/nccl-probe.c).
$(BUILD)/gen/hp_nccl_probe.h: $(BUILD)/gen/probe/nccl-probe.sh tests/tools/embed.sh
	@mkdir -p $(dir $@)
	sh tests/tools/embed.sh $@ $(BUILD)/gen/probe/nccl-probe.sh

# The shell completions, carried by the binary for `hpnode completion` (bash, then zsh).
$(BUILD)/gen/hp_completion.h: src/completion/hpnode.bash src/completion/_hpnode tests/tools/embed.sh
	@mkdir -p $(dir $@)
	sh tests/tools/embed.sh $@ src/completion/hpnode.bash src/completion/_hpnode

# The Slurm controller probe script, carried by the binary (src/collect/slurm/slurm-probe.c).
$(BUILD)/gen/hp_slurm_probe.h: src/collect/slurm/slurm-probe.sh tests/tools/embed.sh
	@mkdir -p $(dir $@)
	sh tests/tools/embed.sh $@ src/collect/slurm/slurm-probe.sh

# The checks in report order, from the HP_CHECK rows of the area files
# (src/checks/registry.c). The list is rewritten only when it changes, so
# editing a check rebuilds registry.o only when rows moved; the stamp
# records that the rows were read.
$(BUILD)/gen/hp_checks.h: $(BUILD)/gen/hp_checks.stamp ;
$(BUILD)/gen/hp_checks.stamp: tests/tools/check-list.sh include/hp/check.h $(wildcard src/checks/*.c)
	@mkdir -p $(dir $@)
	sh tests/tools/check-list.sh $(BUILD)/gen/hp_checks.h include/hp/check.h \
		$(sort $(wildcard src/checks/*.c))
	@touch $@

# The git revision, baked into src/cli/version.c; rewritten only when it changes.
$(BUILD)/gen/hp_revision.h: FORCE
	@mkdir -p $(dir $@)
	@rev=$$(git rev-parse --short=12 HEAD 2>/dev/null || true); \
	if [ -n "$$rev" ] && ! git diff --quiet HEAD -- src include Makefile 2>/dev/null; then rev="$$rev+dirty"; fi; \
	if [ -n "$$rev" ]; then line="#define HP_REVISION \"$$rev\""; else line="/* no git revision */"; fi; \
	if [ ! -f $@ ] || [ "$$(cat $@)" != "$$line" ]; then echo "$$line" >$@; fi
$(BUILD)/src/cli/version.o: $(BUILD)/gen/hp_revision.h
FORCE:

# Each object records the headers it read (-MMD) in a .d file beside it, so
# an edit rebuilds only what includes the edited file; the generated headers
# are made before the first compile (order-only) and tracked the same way.
$(BUILD)/%.o: %.c $(BUILD)/%.d | $(GEN) check-deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(CLI_MAIN_TEST): src/cli/main.c $(CLI_MAIN_TEST:.o=.d) | $(GEN) check-deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DHP_NO_MAIN -MMD -MP -c -o $@ $<

# An object without its .d file (built before it existed) is rebuilt.
$(ALL_DEP): ;
-include $(wildcard $(ALL_DEP))

$(BUILD)/libhp.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(HPNODE): $(BUILD)/src/cli/main.o $(BUILD)/libhp.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(TOOLBIN)/%: $(BUILD)/tests/tools/%.o $(BUILD)/libhp.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/unit/%: $(BUILD)/tests/unit/%.o $(UNIT_SUPPORT) $(BUILD)/libhp.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/tests/fuzz/%.o: ALL_CFLAGS += -Itests/unit -Itests/fuzz \
	-DHP_FUZZ_CORPUS='"$(abspath tests/fuzz/corpus)"'

$(BUILD)/unit/test-fuzz-%: $(BUILD)/tests/fuzz/fuzz-%.o $(BUILD)/tests/fuzz/replay.o \
		$(FUZZ_SUPPORT) $(BUILD)/libhp.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/fuzzer/%: $(BUILD)/tests/fuzz/fuzz-%.o $(FUZZ_SUPPORT) $(BUILD)/libhp.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS_ALL)

unit: $(UNIT_BIN) $(REPLAY_BIN)

# `make fuzz` runs every target (or FUZZ_TARGETS) for FUZZ_TIME seconds
# each, one after the other, on one core, with tests/fuzz/NAME.dict when
# there is one; new inputs go to build/fuzz/corpus/NAME, crashes to
# build/fuzz/crash-NAME-*.
fuzz-build: $(FUZZ_TARGETS:%=$(BUILD)/fuzzer/%)

fuzz:
	@$(MAKE) --no-print-directory FUZZ=1 CC=clang fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p build/fuzz/corpus/$$t; \
		echo "fuzz $$t: $(FUZZ_TIME) s"; \
		d=""; [ ! -f tests/fuzz/$$t.dict ] || d=-dict=tests/fuzz/$$t.dict; \
		build/fuzz/fuzzer/$$t -max_total_time=$(FUZZ_TIME) $$d \
			-rss_limit_mb=2048 -timeout=20 -print_final_stats=0 \
			-artifact_prefix=build/fuzz/crash-$$t- \
			build/fuzz/corpus/$$t tests/fuzz/corpus/$$t; \
	done

# test never installs anything: a missing package is named and `make deps`
# (which .ci/run and demo call) installs it. demo installs missing packages
# first, then builds in a fresh make (pkg-config flags are read when make starts).
# The test programs build on every core unless make was given -j itself
# (only this inner make: `make deps test` still installs before it builds).
TEST_BUILD_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2))
test: check-deps
	@$(MAKE) --no-print-directory $(TEST_BUILD_JOBS) test-run

test-run: all $(UNIT_BIN) $(REPLAY_BIN)
	@HPNODE=$(abspath $(HPNODE)) SIGV4_SIGN=$(abspath $(TOOLBIN)/sigv4-sign) \
		UNIT_DIR=$(abspath $(BUILD)/unit) sh tests/run-tests.sh

# The unit programs and corpus replays only (seconds): `make -j2 quick`.
quick: all $(UNIT_BIN) $(REPLAY_BIN)
	@HPNODE=$(abspath $(HPNODE)) SIGV4_SIGN=$(abspath $(TOOLBIN)/sigv4-sign) \
		UNIT_DIR=$(abspath $(BUILD)/unit) TESTS=none sh tests/run-tests.sh

# The golden reports (tests/data/golden, checked by t0346-golden): rewritten only on purpose.
golden: all
	sh tests/tools/golden.sh update $(abspath $(HPNODE))

# The same, with every snapshot captured again from its fixture cluster (minutes).
golden-capture: all
	sh tests/tools/golden.sh capture $(abspath $(HPNODE))

demo: deps
	@$(MAKE) --no-print-directory demo-run

demo-run: all
	@sh tests/fixtures/demo.sh $(abspath $(HPNODE))

# hpnode nccl on the NCCL demo cluster's hanging training job (needs kubectl).
nccl-demo: deps
	@$(MAKE) --no-print-directory nccl-demo-run

nccl-demo-run: all
	@sh tests/fixtures/nccl-demo.sh $(abspath $(HPNODE))

bench: all
	sh tests/bench/api-phase.sh 1000

# Installs the binary, the man page, the bash and zsh completions and the
# reference guides the report's pointers name (under DOCDIR):
#   make install PREFIX=/usr/local DESTDIR=   (DESTDIR stages into a tree)
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
DOCDIR     ?= $(PREFIX)/share/doc/hpnode
REFDOCS    := $(sort $(wildcard references/*.md))
REFDOCS_JA := $(sort $(wildcard references/ja/*.md))
INSTALLED  := $(BINDIR)/hpnode $(MANDIR)/man1/hpnode.1 $(BASHCOMPDIR)/hpnode $(ZSHCOMPDIR)/_hpnode \
	      $(addprefix $(DOCDIR)/,$(notdir $(REFDOCS))) \
	      $(addprefix $(DOCDIR)/ja/,$(notdir $(REFDOCS_JA)))

INSTALL_BIN ?= $(HPNODE)

install: $(INSTALL_BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 0755 $(INSTALL_BIN) $(DESTDIR)$(BINDIR)/hpnode
	install -m 0644 src/man/hpnode.1 $(DESTDIR)$(MANDIR)/man1/hpnode.1
	install -m 0644 src/completion/hpnode.bash $(DESTDIR)$(BASHCOMPDIR)/hpnode
	install -m 0644 src/completion/_hpnode $(DESTDIR)$(ZSHCOMPDIR)/_hpnode
	install -d $(DESTDIR)$(DOCDIR)
	install -m 0644 $(REFDOCS) $(DESTDIR)$(DOCDIR)/
	$(if $(REFDOCS_JA),install -d $(DESTDIR)$(DOCDIR)/ja)
	$(if $(REFDOCS_JA),install -m 0644 $(REFDOCS_JA) $(DESTDIR)$(DOCDIR)/ja/)

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	rmdir $(DESTDIR)$(DOCDIR)/ja 2>/dev/null || true
	rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null || true

clean:
	rm -rf build hpnode tests/bin
