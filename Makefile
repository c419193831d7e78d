# ObserverSwift: the two commands are `make bench` (or `make demo`) and `make test`.
# Every target installs what it needs first (`make deps`).

SWIFT ?= swift
SWIFTC ?= swiftc
CC ?= cc
DURATION ?= 10
CK_CFLAGS = $(shell pkg-config --cflags ck 2>/dev/null | sed 's/-D__x86_64__//')
CK_LIBS = $(shell pkg-config --libs ck 2>/dev/null || echo -lck)
CORE_SOURCES = $(sort $(wildcard Sources/CObserverCore/*.c))
CORE_INCLUDES = -ISources/CObserverCore/include -ISources/CObserverCore
CORE_OBJECTS = $(patsubst Sources/CObserverCore/%.c,build-c/%.o,$(CORE_SOURCES))

.PHONY: fuzz fuzz-build deps deps-check api-listing api-baseline api-check build strict test program-shapes c-test c-test-asan seed-compat snippets demo demo-nats bench bench-nats bench-read-section bench-quick bench-callgrind bench-build torture reliability-long tsan tsan-selfcheck asan asan-selfcheck valgrind c-warnings examples docs docs-render-check docs-render-selfcheck docs-browser docs-preview lint format clean

# Installs what the package builds and tests with when it is missing:
# Concurrency Kit (Debian libck-dev), the NATS C client (libnats-dev),
# nats-server (the bridge tests and benchmarks start their own) and liburcu
# (liburcu-dev: the read-section benchmark's baseline only; the library never
# links it), with pkg-config. On Debian and Ubuntu only the packages not yet
# installed, by .ci/install-debian-packages: no service starts or is enabled,
# and nothing installed before (a nats-server service the machine runs) is
# stopped, upgraded or reconfigured. Elsewhere (macOS) it installs nothing:
# it checks, and prints the Homebrew line when something is missing.
DEBIAN_PACKAGES = libck-dev libnats-dev nats-server pkg-config liburcu-dev
BREW_PACKAGES = concurrencykit cnats nats-server pkg-config userspace-rcu
NATS_SERVER ?= $(shell command -v nats-server 2>/dev/null || echo /usr/sbin/nats-server)
deps:
	@if pkg-config --exists ck libnats liburcu-memb 2>/dev/null && [ -x "$(NATS_SERVER)" ]; then \
		echo "deps: Concurrency Kit $$(pkg-config --modversion ck), cnats $$(pkg-config --modversion libnats), liburcu $$(pkg-config --modversion liburcu-memb), $(NATS_SERVER)"; \
	elif command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then \
		.ci/install-debian-packages $(DEBIAN_PACKAGES); \
	elif pkg-config --exists ck libnats 2>/dev/null && [ -x "$(NATS_SERVER)" ]; then \
		echo "deps: liburcu is missing: everything but bench-read-section works (brew install userspace-rcu)"; \
	else \
		echo "deps: Concurrency Kit, cnats or nats-server is missing. Install them first:"; \
		echo "  Debian/Ubuntu: apt-get install $(DEBIAN_PACKAGES)   (as root)"; \
		echo "  macOS:         brew install $(BREW_PACKAGES)"; \
		exit 1; \
	fi
	@pkg-config --exists ck || { echo "deps: pkg-config still cannot find ck"; exit 1; }
	@pkg-config --exists libnats || { echo "deps: pkg-config still cannot find libnats"; exit 1; }

# make deps leaves a nats-server service that was there before as it was,
# and installs without starting or enabling a service (CI, as root).
deps-check:
	.ci/deps-leaves-services-alone

# Runs a command beside a nats-server of its own (loopback, free port,
# JetStream); the command reads its URL from OBSERVER_NATS_URL. Without that
# variable the ObserverNATS tests skip themselves. The fault and failover tests
# start their own servers from $(NATS_SERVER) (NATSFailoverTests: a 3-node
# JetStream cluster on loopback, about 35 s) and skip, saying why, without it.
WITH_NATS_SERVER = NATS_SERVER=$(NATS_SERVER) .ci/with-nats-server

build: deps
	$(SWIFT) build

test: deps c-warnings examples c-test seed-compat snippets bench-build fuzz
	$(SWIFT) build --build-tests
	$(MAKE) --no-print-directory program-shapes
	$(WITH_NATS_SERVER) $(SWIFT) test --skip-build

# Main-actor delivery in each shape a program's main actor can have: top-level
# code with a run loop, `dispatchMain()`, and top-level code after `await`
# (on Linux the last two drain the main queue off the main thread).
# Tests/ProgramShapes; each program exits non-zero when a check fails.
program-shapes: deps
	$(SWIFT) build --product shape-sync
	$(SWIFT) build --product shape-async
	bin=$$($(SWIFT) build --show-bin-path); \
		timeout 60 "$$bin/shape-sync" run-loop && \
		timeout 60 "$$bin/shape-sync" dispatch-main && \
		timeout 60 "$$bin/shape-async"

# Two processes over NATS: one publishes a keyed event, the other observes
# some of its keys with a wildcard and prints what arrived.
demo-nats: deps
	$(SWIFT) build -c release --product nats-demo
	$(WITH_NATS_SERVER) sh -c 'bin=$$($(SWIFT) build -c release --show-bin-path)/nats-demo; \
		"$$bin" observe --expect 6 & observer=$$!; \
		"$$bin" publish --wait-for-observer; wait $$observer'

# The seed libraries' README flows, built in Swift 5 language mode by a
# package of their own (Tests/SeedCompatibility) and run. No build-manifest
# caching: a cached manifest misses source files added to or removed from the
# root package, which this package depends on by path.
seed-compat: deps
	cd Tests/SeedCompatibility && $(SWIFT) build --disable-build-manifest-caching && "$$($(SWIFT) build --show-bin-path)/seed-flows"

# The documentation's code as written (every ```swift block of README.md, of
# the DocC articles and of the library sources' /// doc comments, and the
# README's C block built with the README's own command) and the snippets of Tests/CompileChecks (accept/ must compile, reject/
# must fail with the expected error), against the debug build's modules.
# Tests/CompileChecks/check.sh states the rules.
LIBRARY_TARGETS = ObserverSwift ObserverSwiftCompat ObserverSwiftTesting $(notdir $(wildcard Sources/ObserverNATS))
snippets: deps
	for target in $(LIBRARY_TARGETS); do $(SWIFT) build --target $$target || exit 1; done
	SWIFTC="$(SWIFTC)" CC="$(CC)" BIN_PATH="$$($(SWIFT) build --show-bin-path)" Tests/CompileChecks/check.sh

demo: deps
	$(SWIFT) run -c release observer-demo

# Benchmarks (the package Benchmarks/, built against this one by path; the
# DocC article Performance). Release build, then:
# bench: the default set (< 5 min) -> table on stdout, build-c/bench-results.json, build-c/bench-results.svg
# bench-quick: small sizes, short repetitions (< 60 s; the CI smoke test)
# bench-callgrind: instructions per delivery under valgrind (stable on a loaded machine)
# No build-manifest caching, for the reason given at seed-compat.
BENCH_BUILD = $(SWIFT) build -c release --package-path Benchmarks --disable-build-manifest-caching
BENCH_BIN_PATH = $$($(SWIFT) build -c release --package-path Benchmarks --show-bin-path)
BENCH_BIN = $(BENCH_BIN_PATH)/observer-bench
BENCH_ARGS ?=

bench: deps
	$(BENCH_BUILD) --product observer-bench
	@mkdir -p build-c
	$(BENCH_BIN) --json build-c/bench-results.json --svg build-c/bench-results.svg $(BENCH_ARGS)
	$(MAKE) --no-print-directory bench-nats
	$(MAKE) --no-print-directory bench-read-section

bench-quick: deps
	$(BENCH_BUILD) --product observer-bench
	@mkdir -p build-c
	$(BENCH_BIN) --quick --json build-c/bench-results.json --svg build-c/bench-results.svg $(BENCH_ARGS)
	$(MAKE) --no-print-directory bench-nats NATS_BENCH_ARGS=--quick
	$(MAKE) --no-print-directory bench-read-section READ_SECTION_ARGS=--quick

# The core's read section around a one-observer send beside liburcu's memb
# flavor and a raw function-pointer call, in C (Benchmarks/read-section): the
# only program that links liburcu. READ_SECTION_ARGS: --quick, --rounds N,
# --iterations N. OBSERVER_CORE_MEMBARRIER=0 measures the fenced fallback.
READ_SECTION_ARGS ?=
bench-read-section: deps
	@pkg-config --exists liburcu-memb || { echo "bench-read-section: liburcu-memb is missing (Debian liburcu-dev, macOS userspace-rcu)"; exit 1; }
	@mkdir -p build-c
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror $(CK_CFLAGS) $(CORE_INCLUDES) $$(pkg-config --cflags liburcu-memb) \
		Benchmarks/read-section/read_section_bench.c $(CORE_SOURCES) -o build-c/read-section-bench \
		-lpthread $(CK_LIBS) $$(pkg-config --libs liburcu-memb)
	./build-c/read-section-bench $(READ_SECTION_ARGS)

# The NATS bridge against raw cnats loops in C (Benchmarks/nats-bench), beside
# a nats-server of its own. A separate executable: observer-bench does not link libnats.
NATS_BENCH_BIN = $(BENCH_BIN_PATH)/nats-bench
NATS_BENCH_ARGS ?=
bench-nats: deps
	$(BENCH_BUILD) --product nats-bench
	$(WITH_NATS_SERVER) sh -c '$(NATS_BENCH_BIN) $(NATS_BENCH_ARGS)'

bench-callgrind: deps
	@command -v valgrind >/dev/null || { echo "bench-callgrind: valgrind is missing (apt-get install valgrind)"; exit 1; }
	$(BENCH_BUILD) --product observer-bench
	@mkdir -p build-c
	$(BENCH_BIN) --callgrind --json build-c/bench-callgrind.json $(BENCH_ARGS)

# Every benchmark executable compiles (debug build; part of `make test`).
bench-build: deps
	$(SWIFT) build --package-path Benchmarks --disable-build-manifest-caching

# ---------------------------------------------------------------------------
# Reliability: the stress and sanitizer gates (CONTRIBUTING.md, "Testing").
# DURATION: seconds of `make torture` for each observer kind it covers (CI 10, long form 600).
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
	OBSERVER_OUTAGE_SECONDS=300 $(SWIFT) test --skip-build \
		--filter 'NATSCloseAcrossFailoverTests/testALongOutageWithTheRetryQueueFullKeepsMemoryAndCPUFlat'

# The whole suite under ThreadSanitizer: any report fails the run.
tsan: deps
	$(SWIFT) build --build-tests $(TSAN_FLAGS)
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" $(WITH_NATS_SERVER) $(SWIFT) test --skip-build $(TSAN_FLAGS)

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
# The log is build-c/asan.log; a failed run ends with .ci/leak-digest's
# summary of each report (the allocating lines of our code).
asan: deps c-test-asan
	$(SWIFT) build --build-tests $(ASAN_FLAGS)
	@mkdir -p build-c
	@LSAN_OPTIONS="suppressions=$(LSAN_SUPPRESSIONS) $(LSAN_OPTIONS)" ASAN_OPTIONS="detect_leaks=1 $(ASAN_OPTIONS)" \
		$(WITH_NATS_SERVER) $(SWIFT) test --skip-build $(ASAN_FLAGS) > build-c/asan.log 2>&1; status=$$?; \
	cat build-c/asan.log; \
	if [ $$status -ne 0 ]; then \
		echo "asan: FAILED (exit $$status); the reports, shortest form (full log: build-c/asan.log):"; \
		.ci/leak-digest build-c/asan.log; exit $$status; \
	fi

# Shows that the LSan suppressions are targeted: runs a test that leaks on
# purpose and succeeds only if LeakSanitizer reports those leaks.
asan-selfcheck: deps
	$(SWIFT) build --build-tests $(ASAN_FLAGS)
	@mkdir -p build-c
	@if OBSERVER_LSAN_SELFCHECK=1 LSAN_OPTIONS="suppressions=$(LSAN_SUPPRESSIONS)" ASAN_OPTIONS="detect_leaks=1" \
		$(SWIFT) test --skip-build $(ASAN_FLAGS) --filter LeakSelfCheckTests > build-c/asan-selfcheck.log 2>&1; then \
		echo "asan-selfcheck: FAILED: the deliberate leaks were not reported (see build-c/asan-selfcheck.log)"; exit 1; \
	elif grep -q "LeakSelfCheck" build-c/asan-selfcheck.log && grep -q "Direct leak" build-c/asan-selfcheck.log \
		&& grep -q "WeaklyReferencedLeak" build-c/asan-selfcheck.log; then \
		echo "asan-selfcheck: ok, LeakSanitizer reported the deliberate leaks"; \
	else \
		echo "asan-selfcheck: FAILED for another reason (see build-c/asan-selfcheck.log)"; exit 1; \
	fi

# libFuzzer over what a NATS import decodes from the network (frame headers,
# sequence tracking, subject tokens and keys): Tests/Fuzz/FrameDecodingFuzz.swift
# compiled with the bridge's own source files below, with AddressSanitizer.
# `make fuzz` runs it for FUZZ_SECONDS (part of `make test`) from the corpus in
# Tests/Fuzz/corpus (read-only here: new inputs go to build-c/fuzz-corpus);
# a failing input is written to build-c/fuzz-crash-*. Long form:
# `make fuzz FUZZ_SECONDS=600`.
FUZZ_SECONDS ?= 25
FUZZ_SOURCES = Sources/ObserverNATS/Wire/NATSCodec.swift Sources/ObserverNATS/Wire/NATSWireValue.swift \
	Sources/ObserverNATS/Wire/NATSSubjectKey.swift Sources/ObserverNATS/Import/PublisherSequences.swift \
	Tests/Fuzz/FrameDecodingFuzz.swift
fuzz-build:
	@mkdir -p build-c/fuzz-corpus
	$(SWIFTC) -sanitize=fuzzer,address -use-ld=lld -parse-as-library -O -g $(FUZZ_SOURCES) -o build-c/nats-fuzz

# SWIFT_BACKTRACE=enable=no: Swift's crash backtracer and ASan's report fight over a failing run.
fuzz: fuzz-build
	@echo "fuzz: $(FUZZ_SECONDS) s (log in build-c/fuzz.log)"
	@SWIFT_BACKTRACE=enable=no ./build-c/nats-fuzz -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
		-artifact_prefix=build-c/fuzz-crash- build-c/fuzz-corpus Tests/Fuzz/corpus > build-c/fuzz.log 2>&1; \
		status=$$?; grep -e '^stat::number_of_executed_units' -e '^Done' build-c/fuzz.log; \
		if [ $$status -ne 0 ]; then tail -n 40 build-c/fuzz.log; echo "fuzz: FAILED (input in build-c/fuzz-crash-*)"; fi; \
		exit $$status

# The C API test program (Tests/c/oc_core_test.c), built with the debug
# consistency checks on (it tests them), by the system compiler.
C_TEST_BUILD = $(CC) -std=c11 -O1 -g -Wall -Wextra -Werror -pthread -DOC_DEBUG_CHECKS=1 $(CK_CFLAGS) \
	$(CORE_INCLUDES) Tests/c/oc_core_test.c $(CORE_SOURCES) $(CK_LIBS) -o build-c/oc_core_test

c-test: deps
	@mkdir -p build-c
	$(C_TEST_BUILD)
	./build-c/oc_core_test

# The C API test program under memcheck: 0 errors, 0 definitely lost. Its
# forked children (fork and abort tests) are not checked.
valgrind: deps
	@command -v valgrind >/dev/null 2>&1 || { echo "valgrind: not installed (Debian: apt-get install valgrind)"; exit 1; }
	@mkdir -p build-c
	$(C_TEST_BUILD)
	OC_TEST_FULL_LIST_ROUNDS=1 valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=1 \
		--child-silent-after-fork=yes build-c/oc_core_test

# The C API test program under AddressSanitizer + LeakSanitizer (part of
# `make asan`): among others the full-list clear, destroy and barrier
# sequence, three rounds, where a double free or a use after free aborts.
c-test-asan: deps
	@mkdir -p build-c
	$(C_TEST_BUILD:build-c/oc_core_test=build-c/oc_core_test_asan) -fsanitize=address -fno-omit-frame-pointer
	ASAN_OPTIONS="detect_leaks=1" ./build-c/oc_core_test_asan

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

# The C and C++ embedding examples, built with the system compilers against the
# core alone, run, and checked against their expected output.
examples: deps
	@mkdir -p build-c
	@for source in $(CORE_SOURCES); do \
		cc -std=c11 -O2 -Wall -Wextra -Werror $(CK_CFLAGS) $(CORE_INCLUDES) -c $$source -o build-c/$$(basename $$source .c).o || exit 1; \
	done
	cc -std=c11 -O2 -Wall -Wextra -Werror $(CK_CFLAGS) $(CORE_INCLUDES) Examples/c/embed.c $(CORE_OBJECTS) -o build-c/embed -lpthread $(CK_LIBS)
	c++ -std=c++17 -O2 -Wall -Wextra -Werror $(CK_CFLAGS) $(CORE_INCLUDES) Examples/c/embed.cpp $(CORE_OBJECTS) -o build-c/embed-cpp -lpthread $(CK_LIBS)
	./build-c/embed | diff -u Examples/c/embed.expected -
	./build-c/embed-cpp | diff -u Examples/c/embed-cpp.expected -
	@echo "examples: C and C++ embeddings ran and printed what they should"

clean:
	$(SWIFT) package clean
	$(SWIFT) package --package-path Benchmarks clean
	rm -rf build-c docs-site

# The public API of each library product, recorded in api/ (one sorted,
# diff-friendly line per declaration; .ci/public-api says what a line holds):
# ObserverSwift, ObserverSwiftCompat and ObserverNATS from their symbol graphs
# (swift symbolgraph-extract over the debug build's modules), CObserverCore
# from its public headers. `make api-baseline` regenerates api/*.txt;
# `make api-check` fails when the API differs from api/, or when api/ differs
# from api/released/ (the API of the last release) and CHANGELOG.md's
# Unreleased section does not record it. The versioning policy: CHANGELOG.md.
API_SWIFT_MODULES = ObserverSwift ObserverSwiftCompat ObserverSwiftTesting ObserverNATS
API_HEADERS = $(sort $(wildcard Sources/CObserverCore/include/*.h))
API_OUT = .build/api
# What swift symbolgraph-extract needs to load the debug build's modules
# (used in a recipe that sets `bin`, the build's bin path).
SYMBOL_GRAPH_SEARCH_PATHS = -I "$$bin/Modules" \
	$$(for map in "$$bin"/*.build/module.modulemap; do echo -Xcc -fmodule-map-file=$$map; done) \
	-I Sources/CObserverCore/include -I Sources/CConcurrencyKit -I Sources/CNATS \
	$$(for flag in $(CK_CFLAGS); do echo -Xcc $$flag; done)
# ObserverSwift re-exports the public types ObserverEngine declares
# (Sources/ObserverSwift/ObserverEngineExports.swift): its symbol graph takes
# them in, so that the API listing and the documentation show them as
# ObserverSwift's.
SYMBOL_GRAPH_REEXPORTS = -experimental-allowed-reexported-modules=ObserverEngine
api-listing: deps
	$(SWIFT) build --target ObserverNATS
	$(SWIFT) build --target ObserverSwiftCompat
	$(SWIFT) build --target ObserverSwiftTesting
	@rm -rf $(API_OUT) && mkdir -p $(API_OUT)/graphs $(API_OUT)/current
	@bin=$$($(SWIFT) build --show-bin-path); \
		triple=$$($(SWIFTC) -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])'); \
		for module in $(API_SWIFT_MODULES); do \
			$(SWIFT) symbolgraph-extract -module-name $$module -target $$triple -skip-synthesized-members \
				$$(test $$module != ObserverSwift || echo $(SYMBOL_GRAPH_REEXPORTS)) \
				$(SYMBOL_GRAPH_SEARCH_PATHS) -output-dir $(API_OUT)/graphs || exit 1; \
			.ci/public-api swift $$module $(API_OUT)/graphs > $(API_OUT)/current/$$module.txt || exit 1; \
		done
	@.ci/public-api c $(API_HEADERS) > $(API_OUT)/current/CObserverCore.txt
	@wc -l $(API_OUT)/current/*.txt | sed 's/^/api: /'

api-baseline: api-listing
	@mkdir -p api
	cp $(API_OUT)/current/*.txt api/
	@echo "api-baseline: api/ updated; say what changed in CHANGELOG.md's Unreleased section"

api-check: api-listing
	@if diff -ru --exclude=released --exclude=README.md api $(API_OUT)/current; then \
		echo "api-check: the public API is the baseline's (api/)"; \
	else \
		echo "api-check: FAILED: the public API differs from api/ (diff above): if on purpose, run make api-baseline"; \
		echo "           and record the change in CHANGELOG.md's Unreleased section"; exit 1; \
	fi
	@.ci/public-api changelog-check api api/released CHANGELOG.md

# Swift 6 strict concurrency with every warning an error (package, tests and
# the benchmarks' package).
strict: deps
	$(SWIFT) build --build-tests --scratch-path .build/strict -Xswiftc -warnings-as-errors
	$(SWIFT) build --package-path Benchmarks --scratch-path Benchmarks/.build/strict --disable-build-manifest-caching \
		-Xswiftc -warnings-as-errors
	@echo "strict: no warnings"

# DocC sites from the catalogs and the compiler's symbol graphs (no plugin),
# built for static hosting under DOCS_HOSTING_BASE_PATH (the repository's
# name by default: https://<owner>.github.io/ObserverSwift/): one tree,
# docs-site/, with ObserverNATS's site in docs-site/nats/. Warnings are
# errors. No browser is needed: make docs-render-check checks the rendering.
DOCS_HOSTING_BASE_PATH ?= ObserverSwift
docs: deps
	rm -rf .build/symbol-graphs docs-site docs-site-nats
	mkdir -p .build/symbol-graphs
	$(SWIFT) build --target ObserverSwift
	@# From the built module rather than the compiler's -emit-symbol-graph: only
	@# symbolgraph-extract takes in the re-exported engine types.
	bin=$$($(SWIFT) build --show-bin-path); \
		triple=$$($(SWIFTC) -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])'); \
		$(SWIFT) symbolgraph-extract -module-name ObserverSwift -target $$triple $(SYMBOL_GRAPH_REEXPORTS) \
			$(SYMBOL_GRAPH_SEARCH_PATHS) -output-dir .build/symbol-graphs
	docc convert Sources/ObserverSwift/ObserverSwift.docc \
		--additional-symbol-graph-dir .build/symbol-graphs \
		--fallback-display-name ObserverSwift --fallback-bundle-identifier org.observerswift.ObserverSwift \
		--transform-for-static-hosting --hosting-base-path $(DOCS_HOSTING_BASE_PATH) \
		--output-path docs-site --warnings-as-errors
	@# The NATS bridge's catalog, from its own module's symbol graphs.
	rm -rf .build/symbol-graphs-nats .build/symbol-graphs-nats-own
	mkdir -p .build/symbol-graphs-nats .build/symbol-graphs-nats-own
	$(SWIFT) build --target ObserverNATS -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc .build/symbol-graphs-nats
	@test -f .build/symbol-graphs-nats/ObserverNATS.symbols.json || { \
		touch Sources/ObserverNATS/Connection/NATSBridge.swift && \
		$(SWIFT) build --target ObserverNATS -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc .build/symbol-graphs-nats; }
	cp .build/symbol-graphs-nats/ObserverNATS*.symbols.json .build/symbol-graphs-nats-own/
	docc convert Sources/ObserverNATS/ObserverNATS.docc \
		--additional-symbol-graph-dir .build/symbol-graphs-nats-own \
		--fallback-display-name ObserverNATS --fallback-bundle-identifier org.observerswift.ObserverNATS \
		--transform-for-static-hosting --hosting-base-path $(DOCS_HOSTING_BASE_PATH)/nats \
		--output-path docs-site/nats --warnings-as-errors
	@echo "docs: docs-site/ is the site for https://<host>/$(DOCS_HOSTING_BASE_PATH)/ (ObserverNATS's under nats/)."
	@echo "docs: make docs-preview serves it at http://127.0.0.1:$(DOCS_PORT)/$(DOCS_HOSTING_BASE_PATH)/documentation/observerswift/"
	@echo "      (the bridge: http://127.0.0.1:$(DOCS_PORT)/$(DOCS_HOSTING_BASE_PATH)/nats/documentation/observernats/)"

# The hosted-path check of the sites in docs-site/ (make docs builds them
# first when docs-site/ is missing): both, served from DOCS_HOSTING_BASE_PATH,
# must render in headless Chromium with no request answered 404
# (.ci/check-docs-site). The browser is CHROMIUM, or chromium,
# chromium-browser or google-chrome on PATH. Without one the check fails,
# naming the browser and how to get it; it installs Debian's chromium (about
# 130 packages, as root, through .ci/install-debian-packages) only when asked:
# INSTALL_BROWSER=1, or CI=true (.ci/run passes INSTALL_BROWSER=1).
docs-render-check: deps docs-browser
	@test -f docs-site/index.html || $(MAKE) --no-print-directory docs
	.ci/check-docs-site docs-site $(DOCS_HOSTING_BASE_PATH) \
		'documentation/observerswift/:ObserverSwift' 'documentation/observerswift/gettingstarted:Getting Started'
	.ci/check-docs-site docs-site/nats $(DOCS_HOSTING_BASE_PATH)/nats 'documentation/observernats/:ObserverNATS'

# Proves that docs-render-check names a missing or broken browser (a missing
# path, a fake that exits 1, one that renders nothing, none on PATH) instead
# of blaming a page (.ci/check-docs-site-selfcheck; needs no browser).
docs-render-selfcheck:
	.ci/check-docs-site-selfcheck

# Installs Debian's chromium for docs-render-check when no browser is found
# and INSTALL_BROWSER=1 or CI=true asks for it; otherwise does nothing (the
# check itself then says what is missing).
INSTALL_BROWSER ?= $(if $(filter true,$(CI)),1,0)
docs-browser:
	@if [ -n "$(CHROMIUM)" ] || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
		|| command -v google-chrome >/dev/null 2>&1; then :; \
	elif [ "$(INSTALL_BROWSER)" = 1 ] && command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then \
		echo "docs-browser: installing Debian's chromium (INSTALL_BROWSER=$(INSTALL_BROWSER))"; \
		.ci/install-debian-packages chromium; \
	fi

# Serves docs-site/ (built first if missing) the way a static host does, under
# DOCS_HOSTING_BASE_PATH, on the loopback interface only, until interrupted.
DOCS_PORT ?= 8000
docs-preview:
	@test -d docs-site || $(MAKE) --no-print-directory docs
	@rm -rf .build/docs-preview && mkdir -p .build/docs-preview/$$(dirname $(DOCS_HOSTING_BASE_PATH)) && \
		ln -s "$$PWD/docs-site" .build/docs-preview/$(DOCS_HOSTING_BASE_PATH)
	@echo "docs-preview: http://127.0.0.1:$(DOCS_PORT)/$(DOCS_HOSTING_BASE_PATH)/documentation/observerswift/ (Ctrl-C stops)"
	@echo "              http://127.0.0.1:$(DOCS_PORT)/$(DOCS_HOSTING_BASE_PATH)/nats/documentation/observernats/"
	python3 -m http.server $(DOCS_PORT) --bind 127.0.0.1 --directory .build/docs-preview

# swift-format (from the toolchain) with the repository's .swift-format,
# no `import Glibc` outside `#if canImport(Glibc)` / `#if os(Linux)` (Darwin),
# no circle of calls between the C core's files, and the Swift tiers of
# CONTRIBUTING's module picture (with the check's own selfcheck).
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Benchmarks Examples
	.ci/check-glibc-imports Sources Tests Benchmarks Examples
	CC="$(CC)" CFLAGS="$(CK_CFLAGS) $(CORE_INCLUDES)" .ci/check-c-core-layering $(CORE_SOURCES)
	.ci/check-swift-tiers
	.ci/check-swift-tiers --selfcheck

format:
	$(SWIFT) format --in-place --recursive Sources Tests Benchmarks Examples
