// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ObserverSwift",
    products: [
        .library(name: "ObserverSwift", targets: ["ObserverSwift"]),
        .library(name: "CObserverCore", targets: ["CObserverCore"]),
        .executable(name: "observer-bench", targets: ["observer-bench"]),
        .executable(name: "observer-demo", targets: ["observer-demo"]),
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
        .target(
            name: "ObserverSwift",
            dependencies: ["CObserverCore"]
        ),
        .executableTarget(
            name: "observer-demo",
            dependencies: ["ObserverSwift"],
            path: "Examples/observer-demo"
        ),
        .executableTarget(
            name: "observer-bench",
            dependencies: ["ObserverSwift"],
            path: "Benchmarks/observer-bench"
        ),
        .executableTarget(
            name: "keyed-bench",
            dependencies: ["ObserverSwift"],
            path: "Benchmarks/keyed-bench"
        ),
        .testTarget(
            name: "ObserverSwiftTests",
            dependencies: ["ObserverSwift"]
        ),
        .testTarget(
            name: "CObserverCoreTests",
            dependencies: ["CObserverCore"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
