import Glibc

/// Writes all of `bytes` to `descriptor` at once, unbuffered (a pipe sees each report as it
/// comes); `false` when the descriptor refuses them.
@discardableResult
func writeAll(_ bytes: some Collection<UInt8>, to descriptor: Int32) -> Bool {
    Array(bytes).withUnsafeBytes { writeAll($0, to: descriptor) }
}

/// Writes all of `bytes` to `descriptor`, retrying after a signal and after a partial
/// write; `false` when the descriptor refuses them.
@discardableResult
func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Bool {
    var rest = bytes
    while !rest.isEmpty {
        let written = write(descriptor, rest.baseAddress, rest.count)
        if written < 0, errno == EINTR { continue }
        guard written > 0 else { return false }
        rest = UnsafeRawBufferPointer(rebasing: rest[written...])
    }
    return true
}

/// Writes a line to standard output at once; throws, saying why, when standard output
/// refuses it (a full disk), so that the command does not end as if it had succeeded.
func writeLine(_ text: String) throws(FileError) {
    guard writeAll((text + "\n").utf8, to: 1) else {
        throw FileError(description: "cannot write to standard output: \(String(cString: strerror(errno)))")
    }
}

/// A file, folder, link or stream that failed a command: one it was given that cannot be
/// read or made (a folder that is not there, a folder where a log belongs, someone's file
/// where a link would go, a log too long or holding nothing to replay), or standard output
/// or a copy refusing what it wrote (a full disk). Printed as it is, with status 1 and
/// without the usage text: the command line was right, what it names is not.
struct FileError: Error, CustomStringConvertible {
    let description: String
}
