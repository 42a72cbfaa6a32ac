#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser

/// Passwords and lists of users read from files, which keep them out of `ps` (an address's
/// password given on the command line is hidden by
/// `ServiceAddress.hidePasswordsInCommandLine()`).
enum Secrets {
    /// The longest password read from a file.
    static let longestPassword = 4096

    /// The password on the first line of `path` (the line end removed). Throws, naming
    /// `option`, when the file cannot be read or the line is empty.
    static func firstLine(of path: String, option: String) throws -> String {
        guard let file = fopen(path, "r") else {
            throw ValidationError("\(option) \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        // Read into room for the longest password and its line end, no more: the path may
        // name a file with no line end at all (/dev/zero).
        var line = [CChar](repeating: 0, count: longestPassword + 3)
        var text = ""
        if fgets(&line, Int32(line.count), file) != nil {
            text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        }
        let password = text.filter { $0 != "\n" && $0 != "\r" && $0 != "\r\n" }
        // Cut short (no line end, and more to read) or longer than a password may be. The
        // line end is looked for in bytes: a `String` reads CR LF as one character, which
        // `hasSuffix("\n")` would not match.
        if (text.utf8.last != UInt8(ascii: "\n") && feof(file) == 0) || password.utf8.count > longestPassword {
            throw ValidationError("\(option) \(path): its first line is longer than \(longestPassword) bytes")
        }
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
}
