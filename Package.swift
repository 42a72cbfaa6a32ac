// swift-tools-version:6.3
import PackageDescription

/// The receiver drivers beside NMEA and UBX, one module each (`Sources/<name>`, tested in
/// `Tests/<name>Tests`), in the order `ReceiverDrivers` lists them: adding a protocol is a
/// module, a line here and a line in `Sources/ReceiverDrivers/Registry.swift`.
let driverModules = ["DriverCASIC", "DriverSkytraq", "DriverSiRF", "DriverTSIP"]

let package = Package(
    name: "GPSFix",
    products: [
        .library(name: "NMEA", targets: ["NMEA"]),
        .library(name: "GPSFix", targets: ["GPSFix"]),
        .library(name: "UBX", targets: ["UBX", "ReceiverFraming"]),
        .library(name: "GPSDProtocol", targets: ["GPSDProtocol"]),
        // For the fuzz package: the drivers' registry and their modules.
        .library(name: "ReceiverDrivers", targets: ["ReceiverDrivers"] + driverModules),
        // For the fuzz package: every encoder an output writes a fix with, without I/O.
        .library(name: "OutputFormats", targets: ["OutputFormats"]),
        // For the fuzz package: the configurator, given a receiver's answers.
        .library(name: "UBXConfiguration", targets: ["UBXConfiguration"]),
        .library(name: "NTRIPCasting", targets: ["NTRIPCasting"]),
        .executable(name: "gpsfix", targets: ["GPSFixToolMain"]),
        .executable(name: "gpsfixd", targets: ["GPSFixDaemonMain"]),
    ],
    // TLS is a trait, on by default (the package, CI, `scripts/test`): a build without it
    // (`--disable-default-traits`, the demo's first build) compiles no BoringSSL, about 300
    // C files, and refuses ntrips:// and https:// addresses when the daemon starts.
    traits: [
        .trait(name: "TLS", description: "ntrips:// casters and https:// Traccar endpoints, through swift-nio-ssl"),
        .default(enabledTraits: ["TLS"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        // TLS for ntrips:// casters and https:// Traccar servers.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.27.0"),
    ],
    targets: [
        // The NMEA 0183 parser: framer, field cursor, exact decimals, typed sentences.
        // No Foundation and no dependencies, so it builds anywhere and allocates nothing per sentence.
        .target(name: "NMEA"),
        // What one receiver port sends, split: NMEA 0183 sentences (to the NMEA framer),
        // UBX frames and RTCM 3 frames, each checked; allocation-free like the NMEA framer.
        .target(name: "ReceiverFraming", dependencies: ["NMEA"]),
        // u-blox's binary protocol: its messages read in place from a frame, by generation.
        .target(name: "UBX", dependencies: ["ReceiverFraming"]),
        // Configuring u-blox receivers by intent: the configuration interface's keys and
        // CFG-VALSET/VALGET (protocol 27 on), the legacy CFG messages before it, and the
        // conversation that waits for each acknowledgement. No I/O: a link is given to it.
        .target(name: "UBXConfiguration", dependencies: ["UBX", "ReceiverFraming"]),
        // Fixes and sky views from sentences and UBX messages: the assemblers, the value
        // types, the stream decoder and the provider seam.
        .target(name: "GPSFix", dependencies: ["NMEA", "ReceiverFraming", "UBX"]),
        // The list of receiver drivers, for everything that reads a receiver's stream.
        .target(name: "ReceiverDrivers", dependencies: ["GPSFix"] + driverModules.map { .target(name: $0) }),
        // The runtime of a device: every way bytes reach the parser (serial ports,
        // pseudo-terminals, files, gpsd), the provider that reads, reopens and watches a
        // device for silence, and the server's small values carried to it (reactor,
        // timers, sentence demand, reading hold). Blocking writes (the replayer's) run on
        // SwiftNIO's thread pool.
        .target(
            name: "GPSFixDevices",
            dependencies: [
                "GPSFix", "ReceiverFraming", "ReceiverDrivers", "UBX", "UBXConfiguration", "CLibGPS", "ServiceAddress",
                "OutputFormats",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        // libgps, for reading from a running gpsd (Debian: libgps-dev).
        .systemLibrary(name: "CLibGPS", pkgConfig: "libgps", providers: [.apt(["libgps-dev"])]),
        // The time service: receiver time and pulses to chrony (SOCK) and ntpd (SHM).
        .target(
            name: "GPSFixTime",
            dependencies: [
                "GPSFix", "GPSFixDevices", "CTimeService", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        // The structures and ioctls of the time service that only C can spell: ntpd's
        // shared memory, chrony's socket sample, RFC 2783 PPS, TIOCMIWAIT.
        .target(name: "CTimeService"),
        // gpsd's JSON protocol: reports encoded once into bytes, and client commands.
        .target(name: "GPSDProtocol", dependencies: ["GPSFix"]),
        // The other ways a fix leaves the daemon, as bytes and without I/O, so that one
        // fuzz target reaches them all: the GGA sent to casters, Traccar's OsmAnd query,
        // OwnTracks and Home Assistant payloads, the HTTP API's entries and events, NMEA
        // out's lines.
        .target(name: "OutputFormats", dependencies: ["GPSFix", "GPSDProtocol"]),
        // An NTRIP caster's words, without the network: a base's stream described for the
        // source table, the requests read, the users checked (libcrypt for htpasswd's hashes).
        .target(name: "NTRIPCasting", dependencies: ["CCrypt", .product(name: "NIOCore", package: "swift-nio")]),
        .systemLibrary(name: "CCrypt", providers: [.apt(["libcrypt-dev"])]),
        // timerfd(2), which Swift's Glibc module leaves out: the silence watch's timer.
        .target(name: "CTimerDescriptor"),
        // The server: listeners, client sessions and the fan-out hub, on SwiftNIO.
        .target(
            name: "GPSFixServer",
            dependencies: [
                "GPSDProtocol", "GPSFix", "GPSFixDevices", "OutputFormats", "ProcessTable", "NTRIPCasting",
                "CTimerDescriptor", "ServiceAddress",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The status page, served at `/`.
            resources: [.embedInCode("Web/index.html")]
        ),
        // Fixes to an MQTT broker for fleets: gpsd JSON (or OwnTracks) per device, off the
        // event loop, through libmosquitto.
        .target(
            name: "GPSFixMQTT",
            dependencies: [
                "GPSFixServer", "GPSDProtocol", "GPSFix", "CMosquitto", "ServiceAddress", "OutputFormats",
                // Its network thread, and the pipes that wake it.
                "GPSFixDevices",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // The thread pool: libmosquitto's connect and stop block.
                .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        // Positions to a Traccar server with nothing lost: a queue in memory that a journal
        // on disk follows (written on SwiftNIO's thread pool, never the event loop), then
        // OsmAnd requests over SwiftNIO's HTTP/1 codec, with TLS through swift-nio-ssl.
        .target(
            name: "GPSFixTraccar",
            dependencies: [
                "GPSFixServer", "GPSFix", "OutputFormats", "ServiceAddress", "ProcessTable", "HostLookup",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The journal's writes and syncs (on its thread pool), and the connection.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                "ClientTLS",
            ]),
        // RTK corrections: an NTRIP client on SwiftNIO (TLS through swift-nio-ssl) whose
        // RTCM 3 frames are written into the receiver's port, and the position sent back.
        .target(
            name: "GPSFixNTRIP",
            dependencies: [
                "GPSFixServer", "GPSFix", "GPSFixDevices", "ReceiverFraming", "ServiceAddress", "OutputFormats", "NTRIPCasting", "HostLookup",
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "ClientTLS",
            ]),
        // libmosquitto, the Eclipse Mosquitto client library (Debian: libmosquitto-dev for
        // its header), loaded when MQTT is first used.
        .target(name: "CMosquitto"),
        // The daemon's counters in Prometheus' text format, through swift-metrics, served
        // over SwiftNIO's HTTP/1.
        .target(
            name: "GPSFixMetrics",
            dependencies: [
                "GPSFixServer", "GPSFixTime", "GPSFixMQTT", "GPSFixTraccar", "GPSFixNTRIP", "GPSFix", "GPSFixDevices", "NMEA",
                "ReceiverFraming",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // systemd integration: sd_notify, the watchdog interval, socket activation.
        .target(name: "SystemdSupport"),
        // SCHEME://USER:PASSWORD@HOST:PORT/PATH, read one way for every output that takes
        // one (MQTT, NTRIP), and its password kept out of messages and of `ps`.
        .target(name: "ServiceAddress"),
        // The names of the hosts the daemon connects to, looked up one lookup a name at a
        // time, each on a thread of its own: a name DNS does not answer holds up no other.
        .target(
            name: "HostLookup",
            dependencies: [
                "GPSFixDevices", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        // The connections the daemon makes (ntrips://, https://): TLS through swift-nio-ssl,
        // compiled only with the TLS trait (see `traits`), and connects a stop does not wait for.
        .target(
            name: "ClientTLS",
            dependencies: [
                "ServiceAddress", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["TLS"])),
            ]),
        // NMEA 0183 out announced over mDNS through avahi's publisher, a child that gets
        // no secret of the daemon's environment, started again when it ends (its end
        // waited for on a thread of GPSFixDevices').
        .target(name: "MDNSAnnouncement", dependencies: ["ChildProcesses", "GPSFixDevices", .product(name: "Logging", package: "swift-log")]),
        // `gpsfix doctor`: the traps of a GPS daemon (the device held elsewhere, the user not
        // in dialout, chrony without a refclock, ...), found under a root that tests fake.
        .target(name: "GPSFixDoctor", dependencies: ["ProcessTable", "GPSFix"]),
        // The TOML of the configuration file (/etc/gpsfix/gpsfixd.conf), read without
        // Foundation or C++: the daemon's and the doctor's reader.
        .target(name: "TOMLReader"),
        // The processes /proc shows and the TCP ports they listen on, without Foundation:
        // who holds a port the daemon cannot bind, and the doctor's checks.
        .target(name: "ProcessTable"),
        // SIGTERM, SIGINT and SIGHUP as a request to stop, for the daemon and the tool,
        // caught by a C handler (async-signal-safe, in place at once).
        .target(name: "CStopSignals"),
        .target(name: "StopSignals", dependencies: ["CStopSignals"]),
        // The daemon's tasks on its SwiftNIO event loop, through the Swift runtime's hook
        // for its global executor (a C target names the hook for the linker).
        .target(name: "CConcurrencyHooks"),
        .target(
            name: "TasksOnEventLoop",
            dependencies: [
                "CConcurrencyHooks", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        // How the daemon, the tool and the tests start a child: what it inherits
        // (descriptors, signals, the environment without secrets).
        .target(name: "ChildProcesses"),
        // The version and commit, for --version.
        .plugin(name: "BuildInfo", capability: .buildTool()),
        // The daemon's command line and the services it starts.
        .target(
            name: "gpsfixd",
            dependencies: [
                "ClientTLS",
                "GPSFixServer", "GPSFixDevices", "GPSFix", "GPSFixTime", "GPSFixMQTT", "GPSFixMetrics", "GPSFixTraccar",
                "GPSFixNTRIP", "SystemdSupport", "ServiceAddress", "OutputFormats", "MDNSAnnouncement", "ProcessTable",
                "StopSignals", "TasksOnEventLoop",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "TOMLReader",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // The demo receiver: a capture from gpsd's regression suite (BSD licence, see
            // fixtures/gpsd/COPYING), embedded so that --demo needs no file at run time.
            path: "Sources/gpsfixd",
            resources: [.embedInCode("demo.nmea")],
            plugins: ["BuildInfo"]
        ),
        // The companion tool's commands: decode, and (with the devices) replay, record,
        // watch, poll, configure a u-blox receiver, diagnose.
        .target(
            name: "gpsfix",
            dependencies: [
                "NMEA", "GPSFix", "GPSDProtocol", "GPSFixDevices", "GPSFixNTRIP", "GPSFixDoctor", "OutputFormats",
                "UBXConfiguration", "TOMLReader", "ProcessTable", "ReceiverDrivers", "StopSignals", "ChildProcesses",
                "ServiceAddress", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/gpsfix",
            plugins: ["BuildInfo"]
        ),
        // The daemon alone, for development and the tests.
        .executableTarget(name: "GPSFixDaemonMain", dependencies: ["gpsfixd"], path: "Sources/Executables/gpsfixd"),
        // The tool, and the daemon when called as gpsfixd: the one binary the package
        // installs (gpsfixd a link to it), which shares the Swift runtime, SwiftNIO and the
        // parsers between the two instead of carrying them twice.
        .executableTarget(
            name: "GPSFixToolMain", dependencies: ["gpsfixd", "gpsfix"], path: "Sources/Executables/gpsfix"),
        .testTarget(name: "NMEATests", dependencies: ["NMEA", "TestSupport"]),
        // A manual clock and other helpers shared by the test targets.
        .target(
            name: "TestSupport", dependencies: ["GPSFix", "GPSFixDevices", "ProcessTable", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport"),
        .testTarget(
            name: "GPSFixTests",
            dependencies: ["GPSFix", "GPSFixDevices", "GPSDProtocol", "ReceiverFraming", "UBX", "TestSupport"]),
        .testTarget(
            name: "UBXConfigurationTests", dependencies: ["UBXConfiguration", "UBX", "ReceiverFraming", "GPSFixDevices", "TestSupport"]),
        .testTarget(name: "GPSFixDevicesTests", dependencies: ["GPSFixDevices", "GPSFix", "ReceiverFraming", "TestSupport"]),
        .testTarget(
            name: "GPSFixServerTests",
            dependencies: [
                "GPSFixServer", "GPSDProtocol", "GPSFix", "GPSFixDevices", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
            ]),
        .testTarget(name: "GPSFixTimeTests", dependencies: ["GPSFixTime", "GPSFix", "CTimeService", "TestSupport"]),
        .testTarget(name: "GPSFixMQTTTests", dependencies: ["GPSFixMQTT", "GPSFixServer", "GPSDProtocol", "GPSFix", "TestSupport"]),
        .testTarget(
            name: "GPSFixMetricsTests",
            dependencies: [
                "GPSFixMetrics", "GPSFixServer", "GPSFixTime", "GPSFixMQTT", "GPSFix", "NMEA", "TestSupport", "ReceiverDrivers",
                "DriverCASIC",
            ]),
        .testTarget(
            name: "GPSFixNTRIPTests",
            dependencies: ["GPSFixNTRIP", "GPSFix", "NMEA", "OutputFormats", "HostLookup", "TestSupport"]),
        .testTarget(name: "NTRIPCastingTests", dependencies: ["NTRIPCasting", "TestSupport"]),
        .testTarget(name: "GPSFixDoctorTests", dependencies: ["GPSFixDoctor", "TestSupport"]),
        .testTarget(name: "SystemdSupportTests", dependencies: ["SystemdSupport", "TestSupport"]),
        .testTarget(name: "ServiceAddressTests", dependencies: ["ServiceAddress"]),
        .testTarget(name: "TOMLReaderTests", dependencies: ["TOMLReader"]),
        .testTarget(
            name: "GPSFixTraccarTests",
            dependencies: [
                "GPSFixTraccar", "GPSFixServer", "GPSFix", "OutputFormats", "TestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        .testTarget(
            name: "MDNSAnnouncementTests",
            dependencies: ["MDNSAnnouncement", "ChildProcesses", "TestSupport", .product(name: "Logging", package: "swift-log")]),
        // Starts the real daemon and tool as processes, and talks to them as clients do.
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "GPSFixDaemonMain", "GPSFixToolMain", "SystemdSupport", "GPSFixDevices", "GPSFix", "GPSFixNTRIP", "GPSFixTime", "ReceiverFraming",
                "TestSupport", "DriverTSIP", "ChildProcesses", .product(name: "Logging", package: "swift-log"),
            ]),
    ] + driverModules.flatMap { module -> [Target] in
        [
            .target(name: module, dependencies: ["GPSFix", "ReceiverFraming", "NMEA"]),
            .testTarget(
                name: "\(module)Tests",
                dependencies: [.target(name: module), "GPSFix", "NMEA", "ReceiverFraming", "ReceiverDrivers", "TestSupport"]),
        ]
    },
    swiftLanguageModes: [.v6]
)
