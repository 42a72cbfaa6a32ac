import Foundation
import GPSDProtocol
import GPSFix
import NMEA
import TestSupport

enum Fixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures")

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(name)))
    }
}

/// Decodes `text` (a log) and returns every update.
func updates(of text: String, chunkSize: Int = 4096) -> [LocationUpdate] {
    updates(ofLog: Array(text.utf8), chunkSize: chunkSize)
}

func updates(ofLog bytes: [UInt8], chunkSize: Int = 4096) -> [LocationUpdate] {
    DecodedCapture(bytes, drivers: [], chunkSize: chunkSize).updates
}

extension LocationUpdate {
    var fix: Fix? { if case .fix(let fix) = self { fix } else { nil } }
    var sky: SkyView? { if case .sky(let sky) = self { sky } else { nil } }
}

/// Appends `*hh` to a sentence body.
func sentence(_ body: String) -> String {
    let checksum = body.utf8.dropFirst().reduce(UInt8(0), ^)
    return body + "*" + String(format: "%02X", checksum) + "\r\n"
}
