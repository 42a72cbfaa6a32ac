// swift-tools-version:6.3
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, which is the checkout's name.
let project = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// The benchmarks are a package of their own so that `swift test` at the top never
// builds them. Run them with `Benchmarks/run`, which builds in release mode and preloads
// the malloc interposer that counts allocations.
let package = Package(
    name: "GPSFixBenchmarks",
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.1"),
    ],
    targets: [
        .executableTarget(
            name: "ParserBenchmark",
            dependencies: [
                .product(name: "NMEA", package: project),
                .product(name: "GPSFix", package: project),
                .product(name: "UBX", package: project),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ]
        ),
        // Spawns gpsd and gpsfixd and measures them from outside: no link to the project.
        .executableTarget(name: "DaemonBenchmark"),
    ],
    swiftLanguageModes: [.v6]
)
