import Foundation

/// A new, empty folder under the temporary directory, named `gpsfix-NAME-` and a random
/// suffix; the test removes it when done.
public func makeTemporaryFolder(_ name: String) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-\(name)-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// Makes a FIFO at `path` for a test of what may wait on one: should anything open it and
/// wait, a reader and a writer open it after `rescue` seconds, so that the test fails on
/// its own assertions rather than hangs.
public func makeRescuedFIFO(at path: String, rescue seconds: UInt32 = 3) throws {
    guard mkfifo(path, 0o600) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    Thread {
        sleep(seconds)
        let reader = open(path, O_RDONLY | O_NONBLOCK)
        let writer = open(path, O_WRONLY | O_NONBLOCK)
        sleep(1)
        for end in [reader, writer] where end >= 0 { close(end) }
    }.start()
}
