#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import ServiceAddress

/// Passwords, kept out of `ps` and of messages.
enum Secrets {
    /// The password on the first line of `path` (the line end removed). Throws, naming
    /// `option`, when the file cannot be read or the line is empty.
    static func firstLine(of path: String, option: String) throws -> String {
        guard let file = fopen(path, "r") else {
            throw ValidationError("\(option) \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        let text = getline(&line, &capacity, file) >= 0 ? line.map { String(cString: $0) } ?? "" : ""
        let password = text.filter { $0 != "\n" && $0 != "\r" && $0 != "\r\n" }
        guard !password.isEmpty else { throw ValidationError("\(option) \(path) is empty: write the password on its first line") }
        return password
    }

    /// The whole of the file at `path` (at most 1 MiB: a list of users, not a database).
    /// Throws, naming `option`, when it cannot be read.
    static func contents(of path: String, option: String) throws -> String {
        guard let file = fopen(path, "r") else {
            throw ValidationError("\(option) \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        let limit = 1 << 20
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        let count = fread(&bytes, 1, bytes.count, file)
        guard count <= limit else { throw ValidationError("\(option) \(path) is over 1 MiB") }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }

    /// Overwrites, in the process's own argument memory, the password of every
    /// `SCHEME://USER:PASSWORD@HOST` address given on the command line, so that `ps` and
    /// `/proc/PID/cmdline` show `***` (padded with spaces) in its place from then on.
    /// The arguments were parsed before: this changes only what other processes read.
    static func hideInCommandLine() {
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let length = strlen(argument)
            let bytes = UnsafeMutableBufferPointer(start: UnsafeMutableRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: length)
            guard let range = ServiceAddress.passwordRange(in: bytes) else { continue }
            for (offset, position) in range.enumerated() { bytes[position] = offset < 3 ? UInt8(ascii: "*") : UInt8(ascii: " ") }
        }
    }
}
