// swift-tools-version:6.0
import PackageDescription

// The benchmark executables, in a package of their own so that a package
// depending on ObserverSwift never resolves them. Built against the
// repository's package by path, in release: `make bench`, `make bench-nats`,
// `make bench-callgrind`, or `swift run -c release --package-path Benchmarks
// <name>` (the DocC article Performance).
let package = Package(
    name: "ObserverSwiftBenchmarks",
    // Synchronization's Atomic, which the harness uses itself.
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "ObserverSwift", path: "..")],
    targets: [
        .executableTarget(
            name: "observer-bench",
            dependencies: [
                .product(name: "ObserverSwift", package: "ObserverSwift"),
                .product(name: "ObserverSwiftCompat", package: "ObserverSwift"),
            ],
            path: "observer-bench"
        ),
        .executableTarget(
            name: "protocol-bench",
            dependencies: [
                .product(name: "ObserverSwift", package: "ObserverSwift"),
                .product(name: "ObserverSwiftCompat", package: "ObserverSwift"),
            ],
            path: "protocol-bench"
        ),
        .executableTarget(
            name: "keyed-bench",
            dependencies: [.product(name: "ObserverSwift", package: "ObserverSwift")],
            path: "keyed-bench"
        ),
        // The NATS bridge against raw cnats loops in C (a separate executable:
        // observer-bench does not link libnats).
        .systemLibrary(
            name: "CNATSClient",
            path: "cnats",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"]), .brew(["cnats"])]
        ),
        .target(
            name: "CNATSBaselines",
            dependencies: ["CNATSClient"],
            path: "nats-baselines"
        ),
        .executableTarget(
            name: "nats-bench",
            dependencies: [
                .product(name: "ObserverSwift", package: "ObserverSwift"),
                .product(name: "ObserverNATS", package: "ObserverSwift"),
                "CNATSBaselines",
            ],
            path: "nats-bench"
        ),
    ],
    swiftLanguageModes: [.v6]
)
