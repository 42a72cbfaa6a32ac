#if canImport(Glibc)
import Glibc
#endif

extension ServiceAddress {
    /// Overwrites, in the process's own argument memory, the password of every
    /// `SCHEME://USER:PASSWORD@HOST` address given on the command line, and the value of
    /// every option in `secretOptions` (`--traccar-id ID` or `--traccar-id=ID`, named
    /// without its dashes), so that `ps` and `/proc/PID/cmdline` show `***` (padded with
    /// spaces) in their place from then on. Call it once the arguments are parsed: this
    /// changes only what other processes read.
    public static func hidePasswordsInCommandLine(alsoValuesOf secretOptions: Set<String> = []) {
        var valueIsSecret = false
        // Started with no arguments at all (not even its name, as execve allows): none to hide.
        for index in stride(from: 1, to: Int(CommandLine.argc), by: 1) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let length = strlen(argument)
            let bytes = UnsafeMutableBufferPointer(start: UnsafeMutableRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: length)
            // After `--`, arguments are devices, whatever they look like.
            if !valueIsSecret, bytes.elementsEqual("--".utf8) { return }
            if valueIsSecret {
                valueIsSecret = false
                mask(bytes, bytes.indices)
            } else if let range = secretOptionValue(in: bytes, options: secretOptions) {
                mask(bytes, range)
            } else if bytes.starts(with: "--".utf8), secretOptions.contains(String(decoding: bytes.dropFirst(2), as: UTF8.self)) {
                valueIsSecret = true
            } else if let range = passwordRange(in: bytes) {
                mask(bytes, range)
            }
        }
    }

    /// Where the value of `--NAME=VALUE` is in `argument`, when NAME is one of `options`.
    private static func secretOptionValue(in argument: UnsafeMutableBufferPointer<UInt8>, options: Set<String>) -> Range<Int>? {
        guard argument.starts(with: "--".utf8), let equals = argument.firstIndex(of: UInt8(ascii: "=")),
            options.contains(String(decoding: argument[2..<equals], as: UTF8.self))
        else { return nil }
        return (equals + 1)..<argument.count
    }

    private static func mask(_ bytes: UnsafeMutableBufferPointer<UInt8>, _ range: Range<Int>) {
        for (offset, position) in range.enumerated() { bytes[position] = offset < 3 ? UInt8(ascii: "*") : UInt8(ascii: " ") }
    }
}
