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
func writeLine(_ text: String) throws(OutputError) {
    guard writeAll((text + "\n").utf8, to: 1) else {
        throw OutputError(description: "cannot write to standard output: \(String(cString: strerror(errno)))")
    }
}

/// Standard output refused what a command wrote.
struct OutputError: Error, CustomStringConvertible {
    let description: String
}

/// A file, folder or link a command was given that cannot be read or made (a folder that
/// is not there, a folder where a log belongs, someone's file where a link would go).
/// Printed as it is, with status 1 and without the usage text: the command line was
/// right, what it names is not.
struct FileError: Error, CustomStringConvertible {
    let description: String
}
