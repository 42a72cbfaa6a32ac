import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

struct PackageFailure: Error, CustomStringConvertible {
    let description: String
}

/// The Debian package: built by `scripts/package`, checked by lintian, installed with apt
/// into a bare Debian 12 root that has no Swift, used there, and purged.
@Suite(
    "The Debian package", .serialized,
    .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/mmdebstrap"), "needs root and mmdebstrap"))
struct PackageTests {
    static let repository = Binaries.fixtures.deletingLastPathComponent()

    /// `scripts/package`'s package, built once for the suite.
    static let package: Result<String, any Error> = Result {
        let output = try run("/bin/bash", [repository.appendingPathComponent("scripts/package").path], timeout: 1800)
        guard let path = output.split(separator: "\n").last.map(String.init), path.hasSuffix(".deb") else {
            throw PackageFailure(description: "scripts/package printed no package: \(output.suffix(300))")
        }
        return repository.appendingPathComponent(path).path
    }

    @Test("lintian reports no error")
    func lintian() throws {
        let deb = try Self.package.get()
        let report = try run("/usr/bin/lintian", ["--no-tag-display-limit", deb], timeout: 300)
        #expect(!report.split(separator: "\n").contains { $0.hasPrefix("E:") }, "\(report)")
    }

    @Test("in a bare Debian 12 root: apt installs it with its dependencies; gpsfixd serves the demo, gpsfix polls and decodes; purge leaves nothing")
    func bareRoot() throws {
        let deb = try Self.package.get()
        let folder = try makeTemporaryFolder("bare-root")
        defer { try? FileManager.default.removeItem(at: folder) }
        let root = folder.appendingPathComponent("root").path
        let bootstrap = try RunningProcess("/usr/bin/mmdebstrap", ["--variant=apt", "bookworm", root])
        #expect(bootstrap.wait(timeout: 600) == 0, "\(bootstrap.errorText.suffix(2000))")
        #expect(!FileManager.default.fileExists(atPath: root + "/usr/bin/swift"))
        let script = Self.repository.appendingPathComponent("Tests/Tools/bare_root_install.sh").path
        let capture = Binaries.fixtures.appendingPathComponent("gpsd/cat-ms352.log").path
        let install = try RunningProcess("/usr/bin/unshare", ["--mount", "--propagation", "private", script, root, deb, capture])
        let status = install.wait(timeout: 600)
        let steps = install.outputText.split(separator: "\n").filter { $0.hasPrefix("STEP ") }.map { String($0.dropFirst(5)) }
        #expect(status == 0, "\(steps)\n\(install.errorText.suffix(2000))")
        #expect(steps.contains { $0.hasPrefix("installed ") && $0.hasSuffix("install ok installed") })
        #expect(steps.contains("swift 0 none"), "no Swift in the root")
        #expect(steps.contains { $0.hasPrefix("user ") && $0.contains("dialout") }, "the gpsfix user is in dialout")
        #expect(steps.contains { $0.hasPrefix("version gpsfixd ") })
        #expect(steps.contains("config checked"))
        #expect(steps.contains { $0.hasPrefix("poll \"class\":\"TPV\"") })
        let decoded = try run(Binaries.gpsfix, ["decode", capture]).components(separatedBy: "\"class\":\"TPV\"").count - 1
        #expect(steps.contains("decode \(decoded) TPVs"), "the same TPVs as this build's gpsfix decode: \(steps)")
        #expect(steps.contains("purged 3"), "binaries, configuration and state gone")
    }
}
