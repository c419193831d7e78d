# ObserverSwift: the two commands are `make bench` (or `make demo`) and `make test`.
# Every target installs what it needs first (`make deps`).

SWIFT ?= swift
CC ?= cc
DURATION ?= 10
CK_CFLAGS = $(shell pkg-config --cflags ck 2>/dev/null | sed 's/-D__x86_64__//')
CK_LIBS = $(shell pkg-config --libs ck 2>/dev/null || echo -lck)
CORE_SOURCES = Sources/CObserverCore/oc_epoch.c Sources/CObserverCore/oc_list.c
CORE_INCLUDES = -ISources/CObserverCore/include -ISources/CObserverCore

.PHONY: deps build test demo bench bench-quick bench-callgrind torture reliability-long tsan tsan-selfcheck asan asan-selfcheck valgrind c-warnings examples lint docs clean

# Installs Concurrency Kit (Debian: libck-dev) when pkg-config cannot find it.
deps:
	@if pkg-config --exists ck 2>/dev/null; then \
		echo "deps: Concurrency Kit found ($$(pkg-config --modversion ck))"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "deps: installing libck-dev and pkg-config with apt-get"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libck-dev pkg-config >/dev/null; \
	elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1; then \
		echo "deps: installing libck-dev and pkg-config with sudo apt-get"; \
		sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libck-dev pkg-config >/dev/null; \
	else \
		echo "deps: Concurrency Kit is missing. Install it first:"; \
		echo "  Debian/Ubuntu: apt-get install libck-dev pkg-config   (as root)"; \
		echo "  macOS:         brew install concurrencykit pkg-config"; \
		exit 1; \
	fi
	@pkg-config --exists ck || { echo "deps: pkg-config still cannot find ck"; exit 1; }

build: deps
	$(SWIFT) build

test: deps c-warnings
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

demo: deps
	$(SWIFT) run -c release observer-demo

bench: deps
	$(SWIFT) run -c release observer-bench

# ---------------------------------------------------------------------------
# Reliability (issue 5). See README section "testing".
# DURATION: seconds of `make torture` (CI 10, long form 600).
# Long forms of the other stress tests: `make reliability-long`.
TSAN_SCRATCH = .build/tsan
ASAN_SCRATCH = .build/asan
# -Xcc -fsanitize=thread makes Swift's Clang importer compile the core's
# inline send path with TSan too, which turns on its happens-before
# annotations (see OC__TSAN_ANNOTATIONS in CObserverCore.h).
TSAN_FLAGS = --sanitize=thread -Xcc -fsanitize=thread --scratch-path $(TSAN_SCRATCH)
ASAN_FLAGS = --sanitize=address --scratch-path $(ASAN_SCRATCH)
LSAN_SUPPRESSIONS = $(CURDIR)/.ci/lsan-xctest.supp

torture: deps
	$(SWIFT) build --build-tests
	OBSERVER_TORTURE_SECONDS=$(DURATION) $(SWIFT) test --skip-build --filter 'TortureTests'

# 10M subscribe/unsubscribe cycles, 1M model operations per seed, and the
# torture for DURATION seconds.
reliability-long: deps
	$(SWIFT) build --build-tests
	OBSERVER_MEMORY_CYCLES=10000000 OBSERVER_MODEL_OPS=1000000 OBSERVER_TORTURE_SECONDS=$(DURATION) \
		$(SWIFT) test --skip-build --filter 'BoundedMemoryTests|ModelBasedTests|TortureTests'

# The whole suite under ThreadSanitizer: any report fails the run.
tsan: deps
	$(SWIFT) build --build-tests $(TSAN_FLAGS)
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" $(SWIFT) test --skip-build $(TSAN_FLAGS)

# Shows that TSan still catches a real race with the annotations on: runs a
# deliberately racy test and succeeds only if TSan reports a data race.
tsan-selfcheck: deps
	$(SWIFT) build --build-tests $(TSAN_FLAGS)
	@mkdir -p build-c
	@if OBSERVER_TSAN_SELFCHECK=1 $(SWIFT) test --skip-build $(TSAN_FLAGS) --filter TSanSelfCheckTests \
		> build-c/tsan-selfcheck.log 2>&1; then \
		echo "tsan-selfcheck: FAILED: the racy test passed unreported (see build-c/tsan-selfcheck.log)"; exit 1; \
	elif grep -q "WARNING: ThreadSanitizer: data race" build-c/tsan-selfcheck.log; then \
		echo "tsan-selfcheck: ok, ThreadSanitizer reported the deliberate race"; \
	else \
		echo "tsan-selfcheck: FAILED for another reason (see build-c/tsan-selfcheck.log)"; exit 1; \
	fi

# The whole suite under AddressSanitizer + LeakSanitizer. Only XCTest's own
# leaks are suppressed, by allocating function (see .ci/lsan-xctest.supp).
asan: deps
	$(SWIFT) build --build-tests $(ASAN_FLAGS)
	LSAN_OPTIONS="suppressions=$(LSAN_SUPPRESSIONS) $(LSAN_OPTIONS)" ASAN_OPTIONS="detect_leaks=1 $(ASAN_OPTIONS)" \
		$(SWIFT) test --skip-build $(ASAN_FLAGS)

# Shows that the LSan suppressions are targeted: runs a test that leaks on
# purpose and succeeds only if LeakSanitizer reports those leaks.
asan-selfcheck: deps
	$(SWIFT) build --build-tests $(ASAN_FLAGS)
	@mkdir -p build-c
	@if OBSERVER_LSAN_SELFCHECK=1 LSAN_OPTIONS="suppressions=$(LSAN_SUPPRESSIONS)" ASAN_OPTIONS="detect_leaks=1" \
		$(SWIFT) test --skip-build $(ASAN_FLAGS) --filter LeakSelfCheckTests > build-c/asan-selfcheck.log 2>&1; then \
		echo "asan-selfcheck: FAILED: the deliberate leaks were not reported (see build-c/asan-selfcheck.log)"; exit 1; \
	elif grep -q "LeakSelfCheck" build-c/asan-selfcheck.log && grep -q "Direct leak" build-c/asan-selfcheck.log; then \
		echo "asan-selfcheck: ok, LeakSanitizer reported the deliberate leaks"; \
	else \
		echo "asan-selfcheck: FAILED for another reason (see build-c/asan-selfcheck.log)"; exit 1; \
	fi

# The C API test program under memcheck: 0 errors, 0 definitely lost.
valgrind: deps
	@command -v valgrind >/dev/null 2>&1 || { echo "valgrind: not installed (Debian: apt-get install valgrind)"; exit 1; }
	@mkdir -p build-c
	$(CC) -std=c11 -O1 -g -Wall -Wextra -Werror -pthread $(CK_CFLAGS) $(CORE_INCLUDES) \
		Tests/c/oc_core_test.c $(CORE_SOURCES) $(CK_LIBS) -o build-c/oc_core_test
	valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=1 \
		build-c/oc_core_test

# C core compiled alone with every warning as an error, by gcc and by clang.
c-warnings: deps
	@for compiler in gcc clang; do \
		if command -v $$compiler >/dev/null 2>&1; then \
			for source in $(CORE_SOURCES); do \
				$$compiler -std=c11 -O2 -Wall -Wextra -Werror $(CK_CFLAGS) $(CORE_INCLUDES) -c $$source -o /dev/null || exit 1; \
			done; \
			echo "c-warnings: $$compiler clean"; \
		fi; \
	done

clean:
	$(SWIFT) package clean
	rm -rf build-c bench-results.json bench-results.svg
