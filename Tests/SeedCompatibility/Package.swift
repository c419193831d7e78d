// swift-tools-version:6.0
import PackageDescription

// The seed libraries' README flows, compiled in Swift 5 language mode against
// ObserverSwift as a user's package would (`make seed-compat`, run by
// `make test`). They must compile unchanged: ObserverSwift's Sendable
// requirements are enforced in Swift 6 mode only.
let package = Package(
    name: "SeedCompatibility",
    // The seed libraries' users' floor (Flowduino's), which ObserverSwift's is.
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6), .visionOS(.v1)],
    dependencies: [.package(name: "ObserverSwift", path: "../..")],
    targets: [
        .executableTarget(
            name: "seed-flows",
            dependencies: [.product(name: "ObserverSwift", package: "ObserverSwift")]
        )
    ],
    swiftLanguageModes: [.v5]
)
