# ObserverSwift: the two commands are `make bench` (or `make demo`) and `make test`.
# Every target installs what it needs first (`make deps`).

SWIFT ?= swift
CC ?= cc
DURATION ?= 10
CK_CFLAGS = $(shell pkg-config --cflags ck 2>/dev/null | sed 's/-D__x86_64__//')
CK_LIBS = $(shell pkg-config --libs ck 2>/dev/null || echo -lck)
CORE_SOURCES = Sources/CObserverCore/oc_epoch.c Sources/CObserverCore/oc_list.c Sources/CObserverCore/oc_keymap.c
CORE_INCLUDES = -ISources/CObserverCore/include -ISources/CObserverCore

.PHONY: deps build test demo bench bench-quick bench-callgrind torture tsan asan valgrind c-warnings examples lint docs clean

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
