import Foundation
import GPSDProtocol
import GPSFix
import NMEA

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
    let log = CaptureLog(bytes)
    let decoder = ReceiverStreamDecoder(for: log)
    var result: [LocationUpdate] = []
    log.payload.withUnsafeBytes { payload in
        var offset = 0
        while offset < payload.count {
            let end = min(offset + chunkSize, payload.count)
            decoder.feed(UnsafeRawBufferPointer(rebasing: payload[offset..<end])) { result.append($0) }
            offset = end
        }
    }
    decoder.finish { result.append($0) }
    return result
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
