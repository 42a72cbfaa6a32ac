#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

@testable import NTRIPCasting

@Suite("The caster's users: plain passwords and htpasswd's hashes")
struct CasterUsersTests {
    @Test("a plain password is taken exactly: another user's, a prefix or a longer one are not")
    func plain() throws {
        let users = try CasterUsers(parsing: "# rovers\nrover:secret\r\n\nother:x\n")
        #expect(users.count == 2)
        #expect(users.accepts(user: "rover", password: "secret"))
        #expect(!users.accepts(user: "rover", password: "secre"))
        #expect(!users.accepts(user: "rover", password: "secrets"))
        #expect(!users.accepts(user: "other", password: "secret"))
        #expect(!users.accepts(user: "nobody", password: "secret"))
        #expect(!users.isHashed("rover"))
    }

    static let htpasswd: String? = {
        let paths: [String] = ["/usr/bin/htpasswd", "/usr/sbin/htpasswd"]
        return paths.first { access($0, X_OK) == 0 }
    }()

    @Test("a line htpasswd -B wrote is checked through libcrypt's bcrypt", .enabled(if: installedOrInCI(htpasswd != nil), "needs htpasswd (apache2-utils)"))
    func bcrypt() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.htpasswd))
        process.arguments = ["-nbB", "-C", "5", "rover", "pass word"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(line.hasPrefix("rover:$2y$05$"))
        let users = try CasterUsers(parsing: line)
        #expect(users.isHashed("rover"))
        #expect(users.accepts(user: "rover", password: "pass word"))
        #expect(!users.accepts(user: "rover", password: "pass Word"))
        // An unknown user's check costs a hash too, off the event loop.
        #expect(users.isHashed("nobody"))
        #expect(!users.accepts(user: "nobody", password: "pass word"))
    }

    @Test("Apache's own hashes, a line without a user and an empty file are refused, naming the line")
    func refused() {
        #expect(throws: CasterUsers.FormatError.self) { try CasterUsers(parsing: "rover:$apr1$abc$def\n") }
        #expect(throws: CasterUsers.FormatError.self) { try CasterUsers(parsing: ":secret\n") }
        #expect(throws: CasterUsers.FormatError.self) { try CasterUsers(parsing: "# nobody\n\n") }
        let error = #expect(throws: CasterUsers.FormatError.self) { try CasterUsers(parsing: "a:b\nrover:$apr1$abc$def\n") }
        #expect(error?.description.contains("line 2") == true)
        #expect(error?.description.contains("htpasswd -B") == true)
        #expect(error?.description.contains("abc") == false, "the hash stays out of the message")
    }
}
