import Glibc

/// Writes all of `bytes` to `descriptor` at once, unbuffered (a pipe sees each report as it
/// comes); `false` when the descriptor refuses them.
@discardableResult
func writeAll(_ bytes: some Collection<UInt8>, to descriptor: Int32) -> Bool {
    var rest = Array(bytes)[...]
    while !rest.isEmpty {
        let written = rest.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written < 0, errno == EINTR { continue }
        guard written > 0 else { return false }
        rest = rest.dropFirst(written)
    }
    return true
}

/// Writes a line to standard output at once.
func writeLine(_ text: String) {
    writeAll((text + "\n").utf8, to: 1)
}
