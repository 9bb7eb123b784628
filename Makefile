# quorum - pre-merge patch review for mailing lists.
# GNU make; every library through pkg-config except notmuch (no .pc file).

VERSION := 0.1.0

PKGS := libgit2 gmime-3.0 libcurl libcjson sqlite3 zlib opendkim tree-sitter libpcre2-8
DEB_PKGS := build-essential pkg-config git libgit2-dev libgmime-3.0-dev \
	libnotmuch-dev libcurl4-openssl-dev libcjson-dev libcmocka-dev \
	libsqlite3-dev sqlite3 zlib1g-dev libopendkim-dev libpcre2-dev notmuch b4 python3 \
	python3-yaml python3-dkim openssl perl \
	clang libclang-rt-14-dev clang-format groff-base libtree-sitter-dev

# The C grammar of the symbol index (review/llm-symbols.c): the npm package
# tree-sitter-c, fetched by `make deps` into deps/ (never committed) and
# checked against this sha512. It stays at 0.21.x: its src/parser.c is
# ABI 14, the newest Debian 12's libtree-sitter 0.20.7 loads (0.22 and
# later are ABI 15).
TS_C_VERSION := 0.21.4
TS_C_SHA512 := 21a871148857898d7949496bb76ba906229204674e684d5f8ca2cad48939cf1a861dfe93d6bbebdc826ba2f6ec139b17872a71ec79e67f9d20b21b29a5a22284
TS_C_DIR := deps/tree-sitter-c-$(TS_C_VERSION)
TS_C_SRC := $(TS_C_DIR)/src/parser.c
# Generated code: built as it comes, without our warnings.
TS_C_FLAGS := -std=gnu11 -w -I$(TS_C_DIR)/src

BUILD ?= build
PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man
CC ?= cc
OPT ?= -O2 -g
SAN ?=
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CMOCKA_CFLAGS := $(shell pkg-config --cflags cmocka 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

QWARN := -Wall -Wextra -Werror -Wshadow \
	-Wno-unused-parameter -Wformat=2 -Wno-format-nonliteral \
	-D_GNU_SOURCE -DQUORUM_VERSION='"$(VERSION)"' \
	-DQUORUM_PROMPTS_DIR='"$(PREFIX)/share/quorum/prompts"' \
	-I. $(PKG_CFLAGS)
QCFLAGS := -std=gnu11 $(OPT) $(SAN) $(QWARN) $(CFLAGS)
QLDFLAGS := $(SAN) $(LDFLAGS)
QLIBS := $(PKG_LIBS) -lnotmuch -lm -lpthread $(LIBS)

LIB_SRC := $(sort $(wildcard mailparse/*.c review/*.c))
BOT_SRC := $(sort $(wildcard bot/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test-*.c))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz-*.c))

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/grammar/tree-sitter-c.o
BOT_OBJ := $(BOT_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%)
LIBQ := $(BUILD)/libquorum.a

# The libFuzzer targets: the library again, built with clang, ASan+UBSan
# and fuzzer coverage into its own directory. FUZZ_SAN overrides the
# sanitizers (e.g. to make one known report recoverable while its fix is
# pending).
FUZZ_BUILD ?= build-fuzz
FUZZ_CC ?= clang
FUZZ_SAN ?= -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS = -std=gnu11 -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) \
	$(QWARN) $(CFLAGS)
FUZZ_OBJ := $(LIB_SRC:%.c=$(FUZZ_BUILD)/%.o) \
	$(FUZZ_BUILD)/grammar/tree-sitter-c.o
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/%)

# What `make format` and `make format-check` cover.
FORMAT_SRC := $(LIB_SRC) $(BOT_SRC) $(UNIT_SRC) $(FUZZ_SRC) \
	$(sort $(wildcard mailparse/*.h review/*.h bot/*.h))
CLANG_FORMAT ?= clang-format

# What `make install` copies as bin/quorum (the tests install the binary
# they test: make install QUORUM_INSTALL=...).
QUORUM_INSTALL ?= quorum

# Quiet by default; `make V=1` shows the commands.
ifeq ($(V),1)
Q :=
QP := @true
else
Q := @
QP := @printf '  %-6s %s\n'
endif

# The binary the tests run; `make asan` points this at the sanitizer build.
QUORUM_BIN ?= $(CURDIR)/$(BUILD)/quorum

.PHONY: all check unit prove asan deps demo bench fuzz fuzz-targets clean \
	install uninstall format format-check
all: quorum

quorum: $(BUILD)/quorum
ifeq ($(BUILD),build)
	@cp $(BUILD)/quorum quorum
endif

$(BUILD)/quorum: $(BOT_OBJ) $(LIBQ)
	$(QP) LINK $@
	$(Q)$(CC) $(QLDFLAGS) -o $@ $(BOT_OBJ) $(LIBQ) $(QLIBS)

$(LIBQ): $(LIB_OBJ)
	@rm -f $@
	$(QP) AR $@
	$(Q)ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(QP) CC $@
	$(Q)$(CC) $(QCFLAGS) -MMD -MP -c -o $@ $<

# The grammar: `make deps` fetches it; without it the build stops here.
$(TS_C_SRC):
	@echo "the C grammar $(TS_C_SRC) is missing: run \`make deps\`" >&2
	@exit 1

$(BUILD)/grammar/tree-sitter-c.o: $(TS_C_SRC)
	@mkdir -p $(dir $@)
	$(QP) CC $@
	$(Q)$(CC) $(OPT) $(SAN) $(TS_C_FLAGS) -c -o $@ $<

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIBQ)
	@mkdir -p $(dir $@)
	$(QP) CCLD $@
	$(Q)$(CC) $(QCFLAGS) $(CMOCKA_CFLAGS) -MMD -MP -o $@ $< $(LIBQ) \
		$(QLDFLAGS) $(QLIBS) $(CMOCKA_LIBS)

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(QP) FUZZCC $@
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/grammar/tree-sitter-c.o: $(TS_C_SRC)
	@mkdir -p $(dir $@)
	$(QP) FUZZCC $@
	$(Q)$(FUZZ_CC) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
		$(TS_C_FLAGS) -c -o $@ $<

$(FUZZ_BUILD)/libquorum.a: $(FUZZ_OBJ)
	@rm -f $@
	$(QP) AR $@
	$(Q)ar rcs $@ $^

$(FUZZ_BUILD)/fuzz-%: tests/fuzz/fuzz-%.c $(FUZZ_BUILD)/libquorum.a
	@mkdir -p $(dir $@)
	$(QP) FUZZLD $@
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -MMD -MP -o $@ $< \
		$(FUZZ_BUILD)/libquorum.a $(QLIBS)

-include $(LIB_OBJ:.o=.d) $(BOT_OBJ:.o=.d) $(UNIT_BIN:=.d)
-include $(FUZZ_OBJ:.o=.d) $(FUZZ_BIN:=.d)

# make check: cmocka unit tests, then prove over the shell tests.
check: unit prove

unit: $(UNIT_BIN) $(BUILD)/quorum
	@QUORUM_BIN=$(QUORUM_BIN) sh tests/run-unit.sh $(UNIT_BIN)

prove: $(BUILD)/quorum
	@QUORUM_BIN=$(QUORUM_BIN) prove $(PROVE_OPTS) tests/t[0-9]*.sh

# ASan+UBSan build of the whole suite, in its own build directory.
asan:
	$(MAKE) BUILD=build-asan CC=clang OPT="-O1 -g -fno-omit-frame-pointer" \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" \
		QUORUM_BIN=$(CURDIR)/build-asan/quorum check

deps:
	@sh contrib/install-deps.sh $(DEB_PKGS)
	@sh contrib/fetch-grammar.sh tree-sitter-c $(TS_C_VERSION) \
		$(TS_C_SHA512) deps

demo: deps
	@$(MAKE) --no-print-directory quorum
	@sh contrib/demo/run-demo.sh $(CURDIR)/quorum

bench: quorum
	@QUORUM_BIN=$(QUORUM_BIN) sh tests/bench/run.sh

# make fuzz [FUZZ_SECONDS=N] [FUZZ_TARGETS="mbox diff"]: build the targets,
# make seeds, run each target N seconds (tests/fuzz/run.sh says how).
fuzz-targets: $(FUZZ_BIN)

fuzz: fuzz-targets
	@FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_TARGETS="$(FUZZ_TARGETS)" \
		sh tests/fuzz/run.sh $(FUZZ_SECONDS)

format:
	$(CLANG_FORMAT) -i $(FORMAT_SRC)

# Every C file as .clang-format wants it; lists those that are not.
format-check:
	@command -v $(CLANG_FORMAT) >/dev/null || \
		{ echo "format-check: $(CLANG_FORMAT) is not installed (make deps)"; exit 3; }
	@bad=0; for f in $(FORMAT_SRC); do \
		$(CLANG_FORMAT) --dry-run --Werror "$$f" >/dev/null 2>&1 || \
			{ echo "  not formatted: $$f"; bad=$$((bad + 1)); }; \
	done; \
	if [ $$bad -ne 0 ]; then \
		echo "format-check: $$bad of $(words $(FORMAT_SRC)) files differ from .clang-format (make format rewrites them)"; \
		exit 1; \
	fi; \
	echo "format-check: all $(words $(FORMAT_SRC)) files are formatted"

install: $(QUORUM_INSTALL)
	install -D -m 0755 $(QUORUM_INSTALL) $(DESTDIR)$(PREFIX)/bin/quorum
	install -d $(DESTDIR)$(PREFIX)/share/quorum/prompts/subsystems
	install -m 0644 prompts/*.md prompts/*.json \
		$(DESTDIR)$(PREFIX)/share/quorum/prompts/
	install -m 0644 prompts/subsystems/* \
		$(DESTDIR)$(PREFIX)/share/quorum/prompts/subsystems/
	install -D -m 0644 contrib/quorum.1 $(DESTDIR)$(MANDIR)/man1/quorum.1

# Removes what install put there: the shared directories it may have
# made (bin/, man1/) are left, as they may hold other programs' files.
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/quorum $(DESTDIR)$(MANDIR)/man1/quorum.1
	rm -rf $(DESTDIR)$(PREFIX)/share/quorum

clean:
	rm -rf build build-asan build-fuzz quorum
