import Foundation
import GPSFix

/// A capture decoded as the daemon decodes a receiver's stream: every update, and the
/// receiver as gpsd's DEVICE report names it.
public struct DecodedCapture {
    public var updates: [LocationUpdate] = []
    public var receiver: ReceiverIdentity

    /// The capture's fixes.
    public var fixes: [Fix] { updates.compactMap { if case .fix(let fix) = $0 { fix } else { nil } } }
    /// The fixes that have a time.
    public var timedFixes: [Fix] { fixes.filter { $0.time != nil } }
    /// The sky views that list satellites (not the DOPs reported again after a fix).
    public var views: [SkyView] {
        updates.compactMap {
            if case .sky(let sky) = $0, !sky.satellites.isEmpty, !sky.satellitesReportedEarlier { sky } else { nil }
        }
    }

    /// Decodes `bytes`, a capture (its `#` header, then what the receiver sent), fed to
    /// the decoder `chunkSize` bytes at a time.
    public init(_ bytes: [UInt8], drivers: [any ReceiverDriver.Type], chunkSize: Int = 4096) {
        let log = CaptureLog(bytes)
        let decoder = ReceiverStreamDecoder(for: log, drivers: drivers)
        var updates: [LocationUpdate] = []
        log.payload.withUnsafeBytes { payload in
            var offset = 0
            while offset < payload.count {
                let end = min(offset + chunkSize, payload.count)
                decoder.feed(UnsafeRawBufferPointer(rebasing: payload[offset..<end])) { updates.append($0) }
                offset = end
            }
        }
        decoder.finish { updates.append($0) }
        self.updates = updates
        receiver = decoder.receiver
    }

    /// The repository's `fixtures/gpsd-binary/`: gpsd's captures of the drivers' receivers.
    public static let binaryFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("fixtures/gpsd-binary")

    /// Decodes the capture `name` of ``binaryFixtures``.
    public static func fixture(
        _ name: String, drivers: [any ReceiverDriver.Type], chunkSize: Int = 4096
    ) throws -> DecodedCapture {
        DecodedCapture(
            Array(try Data(contentsOf: binaryFixtures.appendingPathComponent(name))), drivers: drivers, chunkSize: chunkSize)
    }
}
