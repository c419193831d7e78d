// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ObserverSwift",
    // The floor on Apple platforms is Swift Concurrency's (actors, tasks,
    // async streams). Above it: ObservableValue's Observation conformance
    // (macOS 14 / iOS 17 / tvOS 17 / watchOS 10) and ObserverNATS, whose
    // options are Durations (macOS 13 / iOS 16 / tvOS 16 / watchOS 9), carry
    // their own @available.
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6), .visionOS(.v1)],
    products: [
        .library(name: "ObserverSwift", targets: ["ObserverSwift"]),
        .library(name: "CObserverCore", targets: ["CObserverCore"]),
        .library(name: "ObserverNATS", targets: ["ObserverNATS"]),
        .executable(name: "observer-demo", targets: ["observer-demo"]),
        .executable(name: "nats-demo", targets: ["nats-demo"]),
    ],
    targets: [
        .systemLibrary(
            name: "CConcurrencyKit",
            pkgConfig: "ck",
            providers: [.apt(["libck-dev"]), .brew(["concurrencykit"])]
        ),
        .target(
            name: "CObserverCore",
            dependencies: ["CConcurrencyKit"]
        ),
        // Swift runtime entry points ObserverSwift calls (swift_tryRetain):
        // internal, not a product, so C/C++ embedders never see them.
        .target(name: "CSwiftRuntime"),
        // The atomic words ObserverSwift's engine uses: internal, not a product.
        .target(name: "CEngineAtomics"),
        .target(
            name: "ObserverSwift",
            dependencies: ["CObserverCore", "CSwiftRuntime", "CEngineAtomics"]
        ),
        // The NATS bridge: its own product, so that ObserverSwift alone never links libnats.
        .systemLibrary(
            name: "CNATS",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"]), .brew(["cnats"])]
        ),
        .target(
            name: "ObserverNATS",
            dependencies: ["ObserverSwift", "CNATS"]
        ),
        .executableTarget(
            name: "nats-demo",
            dependencies: ["ObserverNATS"],
            path: "Examples/nats-demo"
        ),
        .executableTarget(
            name: "observer-demo",
            dependencies: ["ObserverSwift"],
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
        .testTarget(
            name: "ObserverSwiftTests",
            dependencies: ["ObserverSwift"]
        ),
        .testTarget(
            name: "ObserverNATSTests",
            dependencies: ["ObserverNATS", "CNATS"]
        ),
        .testTarget(
            name: "CObserverCoreTests",
            dependencies: ["CObserverCore"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
