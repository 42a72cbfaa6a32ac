// swift-tools-version:6.3
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, which is the checkout's name.
let project = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// libFuzzer targets, a package of their own so that `swift test` never builds them with
// the fuzzer's instrumentation. Build and run them with `scripts/fuzz`, which passes
// `-sanitize=fuzzer,address` (libFuzzer supplies `main`).
let package = Package(
    name: "GPSFixFuzz",
    dependencies: [.package(path: "..")],
    targets: [
        // The hand-over to libFuzzer that every target shares.
        .target(name: "FuzzSupport"),
        .executableTarget(
            name: "FuzzNMEA",
            dependencies: [
                "FuzzSupport", .product(name: "NMEA", package: project), .product(name: "GPSFix", package: project),
                .product(name: "UBX", package: project),
            ]
        ),
        // u-blox streams built from the input, checksums and all, through the framer and
        // the UBX decoders.
        .executableTarget(
            name: "FuzzUBX",
            dependencies: [
                "FuzzSupport", .product(name: "NMEA", package: project), .product(name: "GPSFix", package: project),
                .product(name: "UBX", package: project),
            ]
        ),
        // A receiver's answers, from the input, to the configurator's whole conversation.
        .executableTarget(
            name: "FuzzConfigurator",
            dependencies: [
                "FuzzSupport", .product(name: "UBX", package: project), .product(name: "UBXConfiguration", package: project),
            ]
        ),
        // Every registered driver's protocol: frames built from the input, whole or
        // spoiled, through the framer and each driver's assembler.
        .executableTarget(
            name: "FuzzDrivers",
            dependencies: [
                "FuzzSupport", .product(name: "GPSFix", package: project), .product(name: "ReceiverDrivers", package: project),
                .product(name: "UBX", package: project),
            ]
        ),
        .executableTarget(
            name: "FuzzRequests", dependencies: ["FuzzSupport", .product(name: "GPSDProtocol", package: project)]),
        // The caster's inputs: NTRIP request heads, users files, and a base's RTCM 3 frames
        // into the stream summary and the source table.
        .executableTarget(
            name: "FuzzCaster",
            dependencies: [
                "FuzzSupport", .product(name: "NTRIPCasting", package: project), .product(name: "UBX", package: project),
            ]),
        // Bytes through the framer and the assembler into every encoder of every output.
        .executableTarget(
            name: "FuzzOutputs",
            dependencies: [
                "FuzzSupport", .product(name: "NMEA", package: project), .product(name: "GPSFix", package: project),
                .product(name: "GPSDProtocol", package: project), .product(name: "OutputFormats", package: project),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
