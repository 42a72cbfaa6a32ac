// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "GPSFix",
    products: [
        .library(name: "NMEA", targets: ["NMEA"]),
    ],
    dependencies: [],
    targets: [
        // The NMEA 0183 parser: framer, field cursor, exact decimals, typed sentences.
        // No Foundation and no dependencies, so it builds anywhere and allocates nothing per sentence.
        .target(name: "NMEA"),
        .testTarget(name: "NMEATests", dependencies: ["NMEA"]),
    ],
    swiftLanguageModes: [.v6]
)
