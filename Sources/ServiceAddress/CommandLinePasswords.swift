#if canImport(Glibc)
import Glibc
#endif

extension ServiceAddress {
    /// Overwrites, in the process's own argument memory, the password of every
    /// `SCHEME://USER:PASSWORD@HOST` address given on the command line, and the value of
    /// every option in `secretOptions` (`--traccar-id ID` or `--traccar-id=ID`, named
    /// without its dashes), so that `ps` and `/proc/PID/cmdline` show `***` (padded with
    /// spaces) in their place from then on. After `--` no argument is an option, but an
    /// address's password is hidden still (a caster's address given as a device, or as the
    /// tool's argument). Call it once the arguments are parsed: this changes only what
    /// other processes read.
    public static func hidePasswordsInCommandLine(alsoValuesOf secretOptions: Set<String> = []) {
        var valueIsSecret = false
        var optionsEnded = false
        // Started with no arguments at all (not even its name, as execve allows): none to hide.
        for index in stride(from: 1, to: Int(CommandLine.argc), by: 1) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let length = strlen(argument)
            let bytes = UnsafeMutableBufferPointer(start: UnsafeMutableRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: length)
            if valueIsSecret {
                valueIsSecret = false
                mask(bytes, bytes.indices)
                continue
            }
            if !optionsEnded, bytes.elementsEqual("--".utf8) {
                optionsEnded = true
                continue
            }
            if !optionsEnded, bytes.starts(with: "--".utf8) {
                let nameEnd = bytes.firstIndex(of: UInt8(ascii: "=")) ?? bytes.endIndex
                if secretOptions.contains(String(decoding: bytes[2..<nameEnd], as: UTF8.self)) {
                    // `--NAME=VALUE`, or `--NAME` with the value next.
                    if nameEnd < bytes.endIndex { mask(bytes, (nameEnd + 1)..<bytes.endIndex) } else { valueIsSecret = true }
                    continue
                }
            }
            if let range = passwordRange(in: bytes) { mask(bytes, range) }
        }
    }

    private static func mask(_ bytes: UnsafeMutableBufferPointer<UInt8>, _ range: Range<Int>) {
        for (offset, position) in range.enumerated() { bytes[position] = offset < 3 ? UInt8(ascii: "*") : UInt8(ascii: " ") }
    }
}
