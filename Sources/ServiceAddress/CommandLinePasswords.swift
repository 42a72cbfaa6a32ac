#if canImport(Glibc)
import Glibc
#endif

extension ServiceAddress {
    /// Overwrites, in the process's own argument memory, the password of every
    /// `SCHEME://USER:PASSWORD@HOST` address given on the command line, so that `ps` and
    /// `/proc/PID/cmdline` show `***` (padded with spaces) in its place from then on. Call
    /// it once the arguments are parsed: this changes only what other processes read.
    public static func hidePasswordsInCommandLine() {
        // Started with no arguments at all (not even its name, as execve allows): none to hide.
        for index in stride(from: 1, to: Int(CommandLine.argc), by: 1) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let length = strlen(argument)
            let bytes = UnsafeMutableBufferPointer(start: UnsafeMutableRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: length)
            guard let range = passwordRange(in: bytes) else { continue }
            for (offset, position) in range.enumerated() { bytes[position] = offset < 3 ? UInt8(ascii: "*") : UInt8(ascii: " ") }
        }
    }
}
