#if canImport(Glibc)
import Glibc
#endif
import CCrypt

/// Who may take the caster's streams: `user:password` lines, the password as it is or
/// hashed as `htpasswd -B` writes it (bcrypt, `$2y$`; libxcrypt's SHA-crypt and yescrypt
/// hashes are taken too). Blank lines and lines starting with `#` are skipped.
public struct CasterUsers: Sendable {
    /// Why a users file cannot be taken. The text names the line, never its password.
    public struct FormatError: Error, CustomStringConvertible {
        public var description: String
    }

    enum Secret: Sendable {
        case plain([UInt8])
        /// A crypt(3) hash: checking it takes a hash's deliberate cost, so off the event loop.
        case hash(String)
    }

    private let users: [String: Secret]

    /// The users of `text` (a file's contents).
    public init(parsing text: String) throws(FormatError) {
        var users: [String: Secret] = [:]
        // "\r\n" is one Character: either line end ends a line.
        for (number, line) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .enumerated()
        {
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw FormatError(description: "line \(number + 1) is not USER:PASSWORD")
            }
            let user = String(line[..<colon]), secret = String(line[line.index(after: colon)...])
            if secret.hasPrefix("$apr1$") || secret.hasPrefix("{SHA}") {
                throw FormatError(
                    description: "line \(number + 1) (\(user)) has an Apache MD5 or SHA-1 hash, which only Apache reads: "
                        + "write it with htpasswd -B (bcrypt)")
            }
            users[user] = Self.hashPrefixes.contains(where: secret.hasPrefix) ? .hash(secret) : .plain(Array(secret.utf8))
        }
        guard !users.isEmpty else { throw FormatError(description: "it names no user") }
        self.users = users
    }

    /// The hashes crypt(3) checks: bcrypt (htpasswd -B), SHA-256 and SHA-512 crypt, yescrypt.
    private static let hashPrefixes = ["$2y$", "$2b$", "$2a$", "$5$", "$6$", "$y$"]

    /// The users named.
    public var count: Int { users.count }

    /// Whether `password` is `user`'s. With a hashed password this takes the hash's cost
    /// (milliseconds to a second with bcrypt): call it off the event loop. An unknown user
    /// costs a hash too, when the file has one, so the time of an answer does not tell
    /// which users exist.
    public func accepts(user: String, password: String) -> Bool {
        switch users[user] {
        case nil:
            if let decoy { _ = Self.crypt(password, setting: decoy) }
            return false
        case .plain(let expected):
            return Self.constantTimeEqual(Array(password.utf8), expected)
        case .hash(let hash):
            return Self.crypt(password, setting: hash).map { Self.constantTimeEqual(Array($0.utf8), Array(hash.utf8)) } ?? false
        }
    }

    /// Whether checking `user`'s password costs a hash (so is done off the event loop):
    /// an unknown user's does when the file holds a hash.
    public func isHashed(_ user: String) -> Bool {
        switch users[user] {
        case .hash: true
        case .plain: false
        case nil: decoy != nil
        }
    }

    /// A hash of the file's, checked against an unknown user's password for its time.
    private var decoy: String? {
        users.values.lazy.compactMap { if case .hash(let hash) = $0 { hash } else { nil } }.first
    }

    /// crypt(3) of `password` with `setting`'s method, salt and cost, in a buffer of its
    /// own (thread-safe); `nil` when libcrypt refuses the setting.
    private static func crypt(_ password: String, setting: String) -> String? {
        let data = UnsafeMutablePointer<crypt_data>.allocate(capacity: 1)
        defer { data.deallocate() }
        memset(data, 0, MemoryLayout<crypt_data>.size)
        guard let result = crypt_rn(password, setting, data, Int32(MemoryLayout<crypt_data>.size)) else { return nil }
        return String(cString: result)
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
