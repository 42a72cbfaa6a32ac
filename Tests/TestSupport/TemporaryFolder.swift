import Foundation

/// A new, empty folder under the temporary directory, named `gpsfix-NAME-` and a random
/// suffix; the test removes it when done.
public func makeTemporaryFolder(_ name: String) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-\(name)-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}
