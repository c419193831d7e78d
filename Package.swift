// swift-tools-version:6.0
import PackageDescription

// Concurrency Kit's pkg-config name. On Linux none: Debian's (and Ubuntu's)
// `ck.pc` emits `-D__x86_64__`, which SwiftPM drops with a "prohibited
// flag(s)" warning printed on every build of every package depending on
// this one, and libck-dev installs its headers in /usr/include and the
// library in the linker's default path, where a system library is found
// without pkg-config. Elsewhere (Homebrew on macOS: /opt/homebrew) pkg-config
// supplies the paths. libnats' pkg-config flags are only default paths and
// `-lnats`, which SwiftPM accepts silently, so CNATS keeps `pkgConfig`.
#if os(Linux)
    let concurrencyKitPkgConfig: String? = nil
#else
    let concurrencyKitPkgConfig: String? = "ck"
#endif

let package = Package(
    name: "ObserverSwift",
    // Minimum versions the code's availability checks are written against,
    // not platforms built or tested (the DocC article Platforms says which
    // are). The floor on Apple platforms is Swift Concurrency's (actors,
    // tasks, async streams). Above it: ObservableValue's Observation
    // conformance (macOS 14 / iOS 17 / tvOS 17 / watchOS 10) and
    // ObserverNATS, whose options are Durations (macOS 13 / iOS 16 / tvOS 16
    // / watchOS 9), carry their own @available.
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6), .visionOS(.v1)],
    products: [
        .library(name: "ObserverSwift", targets: ["ObserverSwift"]),
        // The seed libraries' spellings (SwiftEvents, Flowduino Observable,
        // IndefiniteObservable, HSObserver) over ObserverSwift, which it
        // re-exports: migrating code changes its import to this.
        .library(name: "ObserverSwiftCompat", targets: ["ObserverSwiftCompat"]),
        .library(name: "CObserverCore", targets: ["CObserverCore"]),
        .library(name: "ObserverNATS", targets: ["ObserverNATS"]),
        // Recorders, settling queued deliveries and a leak check, for tests of
        // code that observes (XCTest or Swift Testing; it imports neither).
        // The library never links it.
        .library(name: "ObserverSwiftTesting", targets: ["ObserverSwiftTesting"]),
        // The demos (Examples/) are executable targets, not products: this
        // package builds and runs them (`make demo`, `make demo-nats`), and a
        // dependent's graph never sees them.
    ],
    targets: [
        .systemLibrary(
            name: "CConcurrencyKit",
            pkgConfig: concurrencyKitPkgConfig,
            providers: [.apt(["libck-dev"]), .brew(["concurrencykit"])]
        ),
        .target(
            name: "CObserverCore",
            dependencies: ["CConcurrencyKit"],
            // The core's C code calls libck itself; without pkg-config (Linux,
            // above) nothing else puts `-lck` on the link line.
            linkerSettings: [.linkedLibrary("ck", .when(platforms: [.linux]))]
        ),
        // Swift runtime entry points ObserverSwift calls (swift_tryRetain):
        // internal, not a product, so C/C++ embedders never see them. The
        // internal C targets carry the project's name: a target name must be
        // unique across a dependent's whole package graph.
        .target(name: "CObserverSwiftRuntime"),
        // The atomic words ObserverSwift's engine uses: internal, not a product.
        .target(name: "CObserverSwiftAtomics"),
        // The engine under the observer kinds: slot lists, subscriptions,
        // deliveries, read sections. Internal, not a product: only it imports
        // the C modules. ObserverSwift re-exports it, so the public types it
        // declares (Subscription, Delivery, ...) are spelled and documented
        // as ObserverSwift's.
        .target(
            name: "ObserverEngine",
            dependencies: ["CObserverCore", "CObserverSwiftRuntime", "CObserverSwiftAtomics"]
        ),
        .target(
            name: "ObserverSwift",
            dependencies: ["ObserverEngine"]
        ),
        .target(
            name: "ObserverSwiftCompat",
            dependencies: ["ObserverSwift", "ObserverEngine"]
        ),
        .target(
            name: "ObserverSwiftTesting",
            dependencies: ["ObserverSwift", "ObserverEngine"]
        ),
        // The NATS bridge: its own product, so that ObserverSwift alone never links libnats.
        .systemLibrary(
            name: "CNATS",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"]), .brew(["cnats"])]
        ),
        .target(
            name: "ObserverNATS",
            dependencies: ["ObserverSwift", "ObserverEngine", "CNATS"]
        ),
        .executableTarget(
            name: "nats-demo",
            dependencies: ["ObserverNATS"],
            path: "Examples/nats-demo"
        ),
        .executableTarget(
            name: "observer-demo",
            dependencies: ["ObserverSwiftCompat"],
            path: "Examples/observer-demo"
        ),
        // Programs of each shape a main actor can have (top-level code with
        // and without `await`, a run loop, `dispatchMain()`), run by
        // `make program-shapes`: main-actor delivery must hold in each.
        .target(
            name: "ProgramShapeChecks",
            dependencies: ["ObserverSwift"],
            path: "Tests/ProgramShapes/Checks"
        ),
        .executableTarget(
            name: "shape-sync",
            dependencies: ["ProgramShapeChecks"],
            path: "Tests/ProgramShapes/sync"
        ),
        .executableTarget(
            name: "shape-async",
            dependencies: ["ProgramShapeChecks"],
            path: "Tests/ProgramShapes/async"
        ),
        // What the test targets share (thread-safe recorders and counters, threads,
        // waits, protocol observers): test targets cannot depend on each other.
        .target(
            name: "ObserverTestSupport",
            path: "Tests/ObserverTestSupport"
        ),
        .testTarget(
            name: "ObserverSwiftTests",
            // ObserverSwiftCompat only for the registry tests that use Flowduino's array forms.
            dependencies: [
                "ObserverSwift", "ObserverEngine", "ObserverSwiftCompat", "ObserverSwiftTesting", "ObserverTestSupport",
            ],
            // A file sees ObserverSwiftCompat's members only if it imports it.
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]
        ),
        .testTarget(
            name: "ObserverSwiftCompatTests",
            dependencies: ["ObserverSwiftCompat", "ObserverEngine", "ObserverSwiftTesting", "ObserverTestSupport"]
        ),
        .testTarget(
            name: "ObserverSwiftTestingTests",
            dependencies: ["ObserverSwiftTesting", "ObserverEngine", "ObserverTestSupport"]
        ),
        .testTarget(
            name: "ObserverNATSTests",
            dependencies: ["ObserverNATS", "ObserverEngine", "CNATS", "ObserverSwiftTesting", "ObserverTestSupport"]
        ),
        .testTarget(
            name: "CObserverCoreTests",
            dependencies: ["CObserverCore", "ObserverTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
