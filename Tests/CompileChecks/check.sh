#!/usr/bin/env bash
# Compiles the documentation's code as written, and the compile-check snippet
# files with their expectations. `make snippets` runs it (part of `make test`)
# after building the library targets in debug; CONTRIBUTING.md describes the
# rules. Every library module of the package can be imported.
#
# Documentation: README.md and every DocC article (Sources/*/*.docc/*.md).
#   - Every ```swift block is compiled against the debug build's modules
#     (ObserverSwift, ObserverSwiftCompat for the seed spellings, and the
#     package's other libraries), in Swift 6 and in Swift 5 language mode,
#     both with warnings as errors and with -emit-sil: the region-based
#     data-race diagnostics come from SIL passes, which -typecheck skips.
#   - The blocks of one document form one program, in document order: a block
#     may use what an earlier block of the same document declared, and names
#     must not clash within a document. Each document is its own module.
#     Diagnostics point at the document's own lines (#sourceLocation).
#   - An HTML comment on the line right before a fence changes that block:
#       <!-- snippet: standalone -->    a program of its own (both modes)
#       <!-- snippet: swift-6-only -->  a program of its own that compiles in
#                                       Swift 6 mode and must fail in Swift 5
#       <!-- snippet: swift-5-only -->  a program of its own that compiles in
#                                       Swift 5 mode and must fail in Swift 6
#       <!-- snippet: manifest -->      a Package.swift, compiled against
#                                       PackageDescription
#     A block that compiles in both modes may not carry an -only marker.
#   - A fence that is indented (inside a list item) is an error: it would
#     escape the check.
#   - The README's ```c block (exactly one) is saved as embed.c and built and
#     run, as written, by the ```sh block marked <!-- snippet: c-build -->
#     (exactly one), in a scratch directory whose Sources/ is the repository's.
#     It must exit 0 and the build must print no diagnostic.
#
# Doc comments: the ```swift blocks of the `///` comments of
# Sources/ObserverSwift, Sources/ObserverEngine, Sources/ObserverSwiftCompat, Sources/ObserverSwiftTesting and
# Sources/ObserverNATS (what DocC shows on symbol pages), compiled the same way.
#   - Each block is a program of its own (its symbol's page is its document),
#     after `import Foundation`, `import ObserverSwift` and an import of the
#     file's own module (none for ObserverEngine's: its public types are
#     ObserverSwift's, which users import). Diagnostics point at the source file's lines.
#   - A comment line right before the fence changes the block:
#       /// <!-- snippet: fragment of NAME -->   compiled inside the context
#           Tests/CompileChecks/contexts/NAME.swift, at its one line that is
#           `// fragment` (the context declares what the fragment names);
#           the context's own lines point at the context file
#       /// <!-- snippet: swift-6-only -->, <!-- snippet: swift-5-only -->
#           as in the documents
#     A context that no fragment names is an error, and so is a ```swift
#     block in a /** */ comment, an indented fence or an unclosed block.
#
# Snippet files: Tests/CompileChecks/accept/*.swift must compile with no
# warning; Tests/CompileChecks/reject/*.swift must fail to compile with an
# error containing the text of each `// expect-error: TEXT` line (at least one
# such line), so a file that fails for another reason (a typo) does not pass.
# A `// swift-language-mode: 5` line selects Swift 5 mode; the default is 6.
# Reject files compile without -warnings-as-errors unless they have a
# `// warnings-as-errors` line (for a check that a warning is emitted).
#
# Jobs: one line per compile, "KIND MODE DIR" (KIND: manifest, doc,
# doc-fails, accept, reject; MODE: the Swift language mode), run JOBS at a
# time while the README's C block builds.
#
# Environment: SWIFTC (swiftc), CC (cc), BIN_PATH (the debug bin path,
# default: `swift build --show-bin-path`), JOBS (parallel compiles; the
# number of processors).
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
SWIFTC="${SWIFTC:-swiftc}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"

if [ "${1:-}" = "--job" ]; then
	# One compile, run in parallel by the main part below: --job KIND MODE DIR
	kind="$2"
	mode="$3"
	dir="$4"
	log="$dir/log-swift$mode"
	source="$dir/main.swift"
	case "$kind" in
	manifest)
		source="$dir/Package.swift"
		"$SWIFTC" -emit-sil -o /dev/null -swift-version "$mode" -warnings-as-errors \
			-I "$MANIFEST_API" -Xfrontend -package-description-version -Xfrontend 6.0 \
			-module-cache-path "$MODULE_CACHE" "$source" >"$log" 2>&1
		status=$?
		;;
	doc | doc-fails | accept | reject)
		if [ "$kind" = accept ] || [ "$kind" = reject ]; then source="$(cat "$dir/source")"; fi
		warnings=(-warnings-as-errors)
		if [ "$kind" = reject ] && ! grep -q '^// warnings-as-errors *$' "$source"; then warnings=(); fi
		# shellcheck disable=SC2086 # C_MODULE_FLAGS is a list of flags without spaces
		"$SWIFTC" -emit-sil -o /dev/null -swift-version "$mode" ${warnings[@]+"${warnings[@]}"} \
			-module-name Snippet -I "$BIN_PATH/Modules" $C_MODULE_FLAGS \
			-module-cache-path "$MODULE_CACHE" "$source" >"$log" 2>&1
		status=$?
		;;
	*)
		echo "check.sh: unknown job kind $kind" >&2
		exit 2
		;;
	esac
	name="$(cat "$dir/name")"
	if [ "$kind" = doc-fails ]; then
		# A block marked for the other mode only: the marker must be true.
		if [ "$status" -eq 0 ]; then
			echo "FAIL $name: compiles in Swift $mode too, so it needs no -only marker (in a document: standalone, or none; in a doc comment: none)"
			exit 1
		fi
		if ! grep -q "error: " "$log"; then
			echo "FAIL $name: the Swift $mode compile failed without a compile error:"
			sed 's/^/    /' "$log"
			exit 1
		fi
		echo "ok   $name (fails in Swift $mode, as marked: $(grep -m 1 -o 'error: .*' "$log"))"
		exit 0
	fi
	if [ "$kind" = reject ]; then
		if [ "$status" -eq 0 ]; then
			echo "FAIL $name: compiled, but must be rejected"
			exit 1
		fi
		missing=0
		expected=0
		while IFS= read -r text; do
			expected=$((expected + 1))
			if ! grep -F -- "error: " "$log" | grep -qF -- "$text"; then
				echo "FAIL $name: no error contains \"$text\"; the compiler said:"
				missing=1
			fi
		done < <(sed -n 's|^// expect-error: *\(.*[^ ]\) *$|\1|p' "$source")
		if [ "$expected" -eq 0 ]; then
			echo "FAIL $name: a reject file needs a \"// expect-error: TEXT\" line"
			exit 1
		fi
		if [ "$missing" -ne 0 ]; then
			sed 's/^/    /' "$log"
			exit 1
		fi
		echo "ok   $name (rejected, Swift $mode)"
		exit 0
	fi
	if [ "$status" -ne 0 ]; then
		echo "FAIL $name (Swift $mode):"
		sed 's/^/    /' "$log"
		exit 1
	fi
	echo "ok   $name (Swift $mode)"
	exit 0
fi

started=$SECONDS
BIN_PATH="${BIN_PATH:-$(cd "$ROOT" && swift build --show-bin-path)}"
for module in ObserverSwift ObserverSwiftCompat; do
	if [ ! -f "$BIN_PATH/Modules/$module.swiftmodule" ]; then
		echo "check.sh: no $module module in $BIN_PATH/Modules: build it first (swift build --target $module)" >&2
		exit 2
	fi
done
SWIFT_ROOT="$(dirname "$(dirname "$(command -v "$SWIFTC")")")"
MANIFEST_API="$SWIFT_ROOT/lib/swift/pm/ManifestAPI"
WORK="$BIN_PATH/../compile-checks"
MODULE_CACHE="$WORK/ModuleCache"
# What SwiftPM passes to a Swift target that imports the package's C targets:
# each C target's include directory and generated module map, and each
# system-library target's module map (`swift build -v` shows the same).
C_MODULE_FLAGS=""
for include in "$ROOT"/Sources/*/include; do
	[ -d "$include" ] || continue
	target="$(basename "$(dirname "$include")")"
	C_MODULE_FLAGS="$C_MODULE_FLAGS -Xcc -I -Xcc $include"
	# A target's own include/module.modulemap is found through -I; SwiftPM
	# generates one only for targets without it (a stale one may remain).
	if [ ! -f "$include/module.modulemap" ] && [ -f "$BIN_PATH/$target.build/module.modulemap" ]; then
		C_MODULE_FLAGS="$C_MODULE_FLAGS -Xcc -fmodule-map-file=$BIN_PATH/$target.build/module.modulemap"
	fi
done
for modulemap in "$ROOT"/Sources/*/module.modulemap; do
	[ -f "$modulemap" ] && C_MODULE_FLAGS="$C_MODULE_FLAGS -Xcc -fmodule-map-file=$modulemap"
done
export ROOT SWIFTC BIN_PATH MANIFEST_API MODULE_CACHE C_MODULE_FLAGS
rm -rf "$WORK/jobs"
mkdir -p "$WORK/jobs" "$MODULE_CACHE"
JOBLIST="$WORK/jobs/list"
: >"$JOBLIST"
failures=0

# Splits one Markdown document into programs under $WORK/jobs and appends
# their jobs ("KIND DIR") to the job list.
extract() {
	local document="$1"
	local slug
	slug="$(echo "$document" | tr '/.' '__')"
	awk -v doc="$document" -v base="$WORK/jobs/$slug" -v joblist="$JOBLIST" '
		# A program in dir, named name, and its compiles ("KIND MODE", ...).
		function job(dir, name, first, second) {
			system("mkdir -p \"" dir "\"")
			print name > (dir "/name"); close(dir "/name")
			print first " " dir >> joblist
			if (second != "") print second " " dir >> joblist
			close(joblist)
		}
		BEGIN {
			inside = ""; marker = ""; previous = ""; blocks = 0; combined = 0; cblocks = 0; builds = 0
			# What each marker compiles: "KIND MODE" pairs.
			compiles["standalone"] = "doc 6,doc 5"
			compiles["swift-6-only"] = "doc 6,doc-fails 5"
			compiles["swift-5-only"] = "doc 5,doc-fails 6"
			compiles["manifest"] = "manifest 6"
		}
		{
			if (inside == "") {
				if ($0 ~ /^[ \t]+```/ && $0 ~ /```(swift|c|sh)[ \t]*$/) {
					printf "%s:%d: indented code fence: move it to column 0 so it is checked\n", doc, NR > "/dev/stderr"
					bad = 1
				}
				if ($0 ~ /^```swift[ \t]*$/) {
					marker = ""
					if (previous ~ /^<!-- snippet: .* -->$/) {
						marker = previous
						sub(/^<!-- snippet: /, "", marker); sub(/ -->$/, "", marker)
					}
					blocks++
					if (marker == "") {
						inside = "combined"
						if (combined == 0) job(base, doc, "doc 6", "doc 5")
						combined++
						file = base "/main.swift"
						printf "#sourceLocation(file: \"%s\", line: %d)\n", doc, NR + 1 >> file
					} else if (marker in compiles) {
						inside = "single"
						dir = base "-line" NR
						split(compiles[marker], pair, ",")
						job(dir, doc ":" NR " (" marker ")", pair[1], pair[2])
						file = dir "/" (marker == "manifest" ? "Package.swift" : "main.swift")
						if (marker != "manifest")
							printf "#sourceLocation(file: \"%s\", line: %d)\n", doc, NR + 1 >> file
					} else {
						printf "%s:%d: unknown snippet marker \"%s\" (known: standalone, swift-6-only, swift-5-only, manifest)\n", doc, NR - 1, marker > "/dev/stderr"
						bad = 1
						inside = "skip"
					}
				} else if ($0 ~ /^```c[ \t]*$/ && doc == "README.md") {
					inside = "c"; cblocks++; file = base "-c/embed.c"
					system("mkdir -p \"" base "-c\"")
				} else if ($0 ~ /^```sh[ \t]*$/ && previous == "<!-- snippet: c-build -->" && doc == "README.md") {
					inside = "c"; builds++; file = base "-c/build.sh"
					system("mkdir -p \"" base "-c\"")
				} else if ($0 ~ /^```/) {
					inside = "other"
				}
			} else if ($0 ~ /^```[ \t]*$/) {
				if (file != "") close(file)
				inside = ""; file = ""
			} else if (inside != "other" && inside != "skip") {
				print $0 >> file
			}
			previous = $0
		}
		END {
			if (inside != "") { printf "%s: a code block is not closed\n", doc > "/dev/stderr"; bad = 1 }
			if (doc == "README.md" && (cblocks != 1 || builds != 1)) {
				printf "README.md: expected one ```c block and one <!-- snippet: c-build --> ```sh block, found %d and %d\n", cblocks, builds > "/dev/stderr"
				bad = 1
			}
			printf "%d\n", blocks > (base ".count")
			exit bad
		}' "$ROOT/$document"
}

# Splits the doc comments of the given Swift sources (paths relative to ROOT)
# into programs under $WORK/jobs, one per ```swift block, and appends their
# jobs to the job list. Writes the number of blocks to $WORK/jobs/comments.count
# and each context a fragment named to $WORK/jobs/contexts.used.
extract_comments() {
	(cd "$ROOT" && awk -v base="$WORK/jobs/comment" -v joblist="$JOBLIST" \
		-v contexts="Tests/CompileChecks/contexts" -v used="$WORK/jobs/contexts.used" '
		function job(dir, name, first, second) {
			system("mkdir -p \"" dir "\"")
			print name > (dir "/name"); close(dir "/name")
			print first " " dir >> joblist
			if (second != "") print second " " dir >> joblist
			close(joblist)
		}
		function fail(line, message) {
			printf "%s:%d: %s\n", FILENAME, line, message > "/dev/stderr"
			bad = 1
		}
		# Writes the program of the block that ends here: the implied imports,
		# then the block, inside its context for a fragment.
		function finish(   dir, file, module, path, line, number, before, marker, context) {
			marker = blockmarker
			dir = base "-" slug "-line" start
			file = dir "/main.swift"
			system("mkdir -p \"" dir "\"")
			module = FILENAME; sub(/^Sources\//, "", module); sub(/\/.*/, "", module)
			print "import Foundation" > file
			print "import ObserverSwift" > file
			if (module != "ObserverSwift" && module != "ObserverEngine") print "import " module > file
			context = ""
			if (marker ~ /^fragment of /) {
				context = marker; sub(/^fragment of /, "", context)
				path = contexts "/" context ".swift"
				if ((getline line < path) < 0) {
					fail(start - 1, "no context \"" context "\" (" path ") for this fragment")
					return
				}
				print context >> used; close(used)
				printf "#sourceLocation(file: \"%s\", line: 1)\n", path > file
				number = 1; before = 1
				do {
					if (line ~ /^[ \t]*\/\/ fragment[ \t]*$/) {
						if (!before) { fail(start - 1, path ": more than one \"// fragment\" line"); close(path); return }
						before = 0
						writeblock(file)
						printf "#sourceLocation(file: \"%s\", line: %d)\n", path, number + 1 > file
					} else {
						print line > file
					}
					number++
				} while ((getline line < path) > 0)
				close(path)
				if (before) { fail(start - 1, path ": no \"// fragment\" line says where a fragment goes"); return }
			} else {
				writeblock(file)
			}
			close(file)
			if (marker == "") job(dir, FILENAME ":" start, "doc 6", "doc 5")
			else if (marker ~ /^fragment of /) job(dir, FILENAME ":" start " (" marker ")", "doc 6", "doc 5")
			else if (marker == "swift-6-only") job(dir, FILENAME ":" start " (" marker ")", "doc 6", "doc-fails 5")
			else job(dir, FILENAME ":" start " (" marker ")", "doc 5", "doc-fails 6")
		}
		function writeblock(file,   i) {
			printf "#sourceLocation(file: \"%s\", line: %d)\n", FILENAME, start + 1 > file
			for (i = 1; i <= count; i++) print lines[i] > file
		}
		FNR == 1 {
			inside = ""; previous = ""; block = 0
			slug = FILENAME; gsub(/[\/.]/, "_", slug)
		}
		{
			if (block) {
				if ($0 ~ /\*\//) block = 0
				if ($0 ~ /```swift/) fail(FNR, "a ```swift block in a /** */ comment: write examples in /// comments, which are checked")
				next
			}
			if ($0 ~ /^[ \t]*\/\*\*/ && $0 !~ /\*\/.*$/ ) { block = 1; if ($0 ~ /```swift/) fail(FNR, "a ```swift block in a /** */ comment: write examples in /// comments, which are checked"); next }
			if ($0 !~ /^[ \t]*\/\/\//) {
				if (inside != "") fail(start, "a code block in a doc comment is not closed")
				if (previous ~ /^<!-- snippet: /) fail(FNR - 1, "a snippet marker belongs on the line right before a ```swift fence")
				inside = ""; previous = ""
				next
			}
			text = $0
			sub(/^[ \t]*\/\/\/ ?/, "", text)
			if (inside == "" && previous ~ /^<!-- snippet: / && text !~ /^```swift[ \t]*$/)
				fail(FNR - 1, "a snippet marker belongs on the line right before a ```swift fence")
			if (inside == "") {
				if (text ~ /^[ \t]+```swift[ \t]*$/) {
					fail(FNR, "indented code fence: move it to the comment'"'"'s first column so it is checked")
				} else if (text ~ /^```swift[ \t]*$/) {
					blocks++
					inside = "swift"; start = FNR; count = 0; blockmarker = ""
					if (previous ~ /^<!-- snippet: .* -->[ \t]*$/) {
						blockmarker = previous
						sub(/^<!-- snippet: /, "", blockmarker); sub(/ -->[ \t]*$/, "", blockmarker)
						if (blockmarker == "standalone") {
							fail(FNR - 1, "a doc comment'"'"'s block is a program of its own already: remove the standalone marker")
							inside = "skip"
						} else if (blockmarker !~ /^(swift-6-only|swift-5-only|fragment of [A-Za-z0-9_-]+)$/) {
							fail(FNR - 1, "unknown snippet marker \"" blockmarker "\" (known in doc comments: fragment of NAME, swift-6-only, swift-5-only)")
							inside = "skip"
						}
					}
				} else if (text ~ /^```/) {
					inside = "other"
				}
			} else if (text ~ /^```[ \t]*$/) {
				if (inside == "swift") finish()
				inside = ""
			} else if (inside == "swift") {
				lines[++count] = text
			}
			previous = text
		}
		END {
			if (inside != "") fail(start, "a code block in a doc comment is not closed")
			printf "%d\n", blocks > (base "s.count")
			exit bad
		}' "$@")
}

documents=(README.md)
while IFS= read -r article; do documents+=("${article#"$ROOT"/}"); done \
	< <(find "$ROOT/Sources" -path '*.docc/*.md' | sort)
swift_blocks=0
for document in "${documents[@]}"; do
	extract "$document" || failures=$((failures + 1))
	slug="$(echo "$document" | tr '/.' '__')"
	swift_blocks=$((swift_blocks + $(cat "$WORK/jobs/$slug.count" 2>/dev/null || echo 0)))
done

# The doc comments of the library modules (what DocC shows on symbol pages).
commented=()
while IFS= read -r source; do commented+=("${source#"$ROOT"/}"); done \
	< <(find "$ROOT/Sources/ObserverSwift" "$ROOT/Sources/ObserverEngine" "$ROOT/Sources/ObserverSwiftCompat" \
		"$ROOT/Sources/ObserverSwiftTesting" "$ROOT/Sources/ObserverNATS" \
		-name '*.swift' 2>/dev/null | sort)
: >"$WORK/jobs/contexts.used"
extract_comments "${commented[@]}" || failures=$((failures + 1))
comment_blocks=$(cat "$WORK/jobs/comments.count" 2>/dev/null || echo 0)
for context in "$ROOT"/Tests/CompileChecks/contexts/*.swift; do
	[ -e "$context" ] || continue
	if ! grep -qxF "$(basename "$context" .swift)" "$WORK/jobs/contexts.used"; then
		echo "FAIL ${context#"$ROOT"/}: no doc comment names this context (<!-- snippet: fragment of $(basename "$context" .swift) -->)"
		failures=$((failures + 1))
	fi
done

for expectation in accept reject; do
	for source in "$ROOT"/Tests/CompileChecks/"$expectation"/*.swift; do
		[ -e "$source" ] || continue
		dir="$WORK/jobs/$expectation-$(basename "$source" .swift)"
		mkdir -p "$dir"
		echo "$source" >"$dir/source"
		echo "${source#"$ROOT"/}" >"$dir/name"
		mode="$(sed -n 's|^// swift-language-mode: *\([0-9][0-9.]*\) *$|\1|p' "$source" | head -n 1)"
		echo "$expectation ${mode:-6} $dir" >>"$JOBLIST"
	done
done

# The README's C block, built and run with the README's own command, while
# the Swift compiles run.
c_dir="$WORK/jobs/README_md-c"
c_build=""
if [ -f "$c_dir/embed.c" ] && [ -f "$c_dir/build.sh" ]; then
	ln -sfn "$ROOT/Sources" "$c_dir/Sources"
	(cd "$c_dir" && CC="${CC:-cc}" sh -e ./build.sh >output 2>diagnostics) &
	c_build=$!
fi

# Every Swift compile, JOBS at a time.
xargs -P "$JOBS" -L 1 "$0" --job <"$JOBLIST" || failures=$((failures + 1))

if [ -n "$c_build" ]; then
	if wait "$c_build" && [ ! -s "$c_dir/diagnostics" ]; then
		echo "ok   README.md C block, built and run with: $(cat "$c_dir/build.sh")"
	else
		echo "FAIL README.md C block (command: $(cat "$c_dir/build.sh")):"
		sed 's/^/    /' "$c_dir/diagnostics" "$c_dir/output"
		failures=$((failures + 1))
	fi
fi

compiles=$(wc -l <"$JOBLIST")
if [ "$failures" -ne 0 ]; then
	echo "snippets: FAILED ($swift_blocks Swift blocks from ${#documents[@]} documents, $comment_blocks from doc comments in ${#commented[@]} sources, $compiles compiles, $((SECONDS - started)) s)"
	exit 1
fi
echo "snippets: ok ($swift_blocks Swift blocks from ${#documents[@]} documents, $comment_blocks from doc comments in ${#commented[@]} sources, $compiles compiles, $((SECONDS - started)) s)"
