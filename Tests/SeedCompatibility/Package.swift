// swift-tools-version:6.0
import PackageDescription

// The seed libraries' README flows, compiled in Swift 5 language mode against
// the ObserverSwiftCompat product as a migrating user's package would
// (`make seed-compat`, run by `make test`). They must compile unchanged but
// for the import and the renames the migration guides list: ObserverSwift's
// Sendable requirements are enforced in Swift 6 mode only.
let package = Package(
    name: "SeedCompatibility",
    // The seed libraries' users' floor (Flowduino's), which ObserverSwift's is.
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6), .visionOS(.v1)],
    dependencies: [.package(name: "ObserverSwift", path: "../..")],
    targets: [
        .executableTarget(
            name: "seed-flows",
            dependencies: [.product(name: "ObserverSwiftCompat", package: "ObserverSwift")]
        )
    ],
    swiftLanguageModes: [.v5]
)
