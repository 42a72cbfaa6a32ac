import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

struct PackageFailure: Error, CustomStringConvertible {
    let description: String
}

/// The Debian packages: built by `scripts/package` for Debian 12 and 13, checked by
/// lintian and for size, each installed with apt into a bare root of its own release that
/// has no Swift, used there, and purged. A release check: `scripts/release-checks` runs it
/// (GPSFIX_RELEASE_CHECKS set), not `scripts/test`.
@Suite(
    "The Debian packages", .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["GPSFIX_RELEASE_CHECKS"] != nil && getuid() == 0
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/mmdebstrap"),
        "a release check (scripts/release-checks): needs root and mmdebstrap"))
struct PackageTests {
    static let repository = Binaries.fixtures.deletingLastPathComponent()
    /// The most a package may weigh: a GPS daemon lives on small boards.
    static let sizeLimit = 12 * 1024 * 1024

    /// `scripts/package`'s packages by release (`deb12`, `deb13`), built once for the suite.
    static let packages: Result<[String: String], any Error> = Result {
        let output = try run("/bin/bash", [repository.appendingPathComponent("scripts/package").path], timeout: 3000)
        var packages: [String: String] = [:]
        for line in output.split(separator: "\n") where line.hasSuffix(".deb") {
            for release in ["deb12", "deb13"] where line.contains("~\(release)_") {
                packages[release] = repository.appendingPathComponent(String(line)).path
            }
        }
        guard packages.count == 2 else { throw PackageFailure(description: "scripts/package printed no packages: \(output.suffix(300))") }
        return packages
    }

    static func package(_ release: String) throws -> String {
        let packages = try Self.packages.get()
        guard let path = packages[release] else { throw PackageFailure(description: "no \(release) package") }
        return path
    }

    @Test("lintian reports no error", arguments: ["deb12", "deb13"])
    func lintian(release: String) throws {
        let report = try run("/usr/bin/lintian", ["--no-tag-display-limit", try Self.package(release)], timeout: 300)
        #expect(!report.split(separator: "\n").contains { $0.hasPrefix("E:") }, "\(report)")
    }

    @Test("each package stays small, recommends its own release's libgps and libmosquitto without requiring them, does not depend on libstdc++, and puts its units where its release wants them", arguments: [("deb12", "libgps28", "./lib"), ("deb13", "libgps30t64", "./usr/lib")])
    func sizeAndDependencies(release: String, libgps: String, systemLibrary: String) throws {
        let deb = try Self.package(release)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: deb)[.size] as? Int)
        #expect(size <= Self.sizeLimit, "\(deb) is \(size / 1024) KB, over the \(Self.sizeLimit / 1024) KB a small board's package may weigh")
        let depends = try run("/usr/bin/dpkg-deb", ["--field", deb, "Depends"])
        let recommends = try run("/usr/bin/dpkg-deb", ["--field", deb, "Recommends"])
        // Loaded only when a gpsd:// device or MQTT is used: a board may go without them.
        #expect(recommends.contains(libgps) && recommends.contains("libmosquitto1"), "\(recommends)")
        #expect(!depends.contains("libgps") && !depends.contains("libmosquitto"), "\(depends)")
        // libstdc++ is linked from its archive: its shared library would cost every daemon
        // a megabyte resident.
        #expect(!depends.contains("libstdc++"), "\(depends)")
        #expect(try run("/usr/bin/dpkg-deb", ["--field", deb, "Version"]).hasSuffix("~\(release)\n"))
        // One binary: gpsfixd is a link to gpsfix.
        let listing = try run("/usr/bin/dpkg-deb", ["--contents", deb])
        #expect(listing.contains("./usr/sbin/gpsfixd -> ../bin/gpsfix"), "\(listing)")
        // The NOTICE files of the Apache-2.0 libraries linked in go with it.
        #expect(listing.contains("./usr/share/doc/gpsfix/NOTICE.gz"), "\(listing)")
        // The units, and the rule that lets the daemon's user open PPS devices: under /lib
        // for Debian 12, whose packages may not move files to /usr; under /usr/lib for
        // Debian 13, whose packages may not ship them in /lib (DEP 17, merged /usr).
        for file in ["systemd/system/gpsfixd.service", "systemd/system/gpsfixd.socket", "udev/rules.d/60-gpsfix-pps.rules"] {
            #expect(listing.contains(" \(systemLibrary)/\(file)\n"), "\(file) under \(systemLibrary): \(listing)")
        }
        if release == "deb13" { #expect(!listing.contains(" ./lib/"), "\(listing)") }
        // Built with the TLS trait: ntrips:// and https:// work from the package.
        let binary = try Self.binary(of: deb)
        // It looks for either release's libgps.
        for name in ["libgps.so.28", "libgps.so.30"] {
            #expect(binary.range(of: Data(name.utf8)) != nil, "\(name) in the \(release) binary")
        }
        #expect(binary.range(of: Data("NIOSSLClientHandler".utf8)) != nil, "the \(release) binary has no TLS")
    }

    @Test("both packages hold the same binary, built once")
    func oneBinary() throws {
        #expect(try Self.binary(of: Self.package("deb12")) == Self.binary(of: Self.package("deb13")))
    }

    @Test("the binary names the commit it was built from (gpsd's VERSION sends it as rev), not one an earlier build stamped")
    func builtFrom() throws {
        let folder = try makeTemporaryFolder("package-contents")
        defer { try? FileManager.default.removeItem(at: folder) }
        let binary = try Self.extractBinary(of: Self.package("deb12"), into: folder)
        let commit = try run("/usr/bin/git", ["-C", Self.repository.path, "describe", "--always", "--dirty", "--exclude", "*"])
        let version = try run(binary, ["--version"])
        #expect(version.contains("(\(commit.trimmingCharacters(in: .whitespacesAndNewlines)))"), "\(version)")
    }

    @Test("the binary is position-independent, relocated at start, and its constants read-only once loaded")
    func hardening() throws {
        let folder = try makeTemporaryFolder("package-contents")
        defer { try? FileManager.default.removeItem(at: folder) }
        let binary = try Self.extractBinary(of: Self.package("deb12"), into: folder)
        let headers = try run("/usr/bin/readelf", ["--wide", "--file-header", "--program-headers", "--dynamic", binary])
        #expect(headers.contains("DYN (Position-Independent Executable file)"))
        #expect(headers.contains("GNU_RELRO"))
        #expect(headers.contains("Flags: NOW PIE"), "bound at start (full RELRO)")
        // The segments in order, each with whether it is writable and the sections in it.
        let lines = headers.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        guard let tableStart = lines.firstIndex(where: { $0 == ["Program", "Headers:"] }),
            let mappingStart = lines.firstIndex(where: { $0.starts(with: ["Section", "to", "Segment", "mapping:"]) })
        else {
            Issue.record("no program headers: \(headers.prefix(2000))")
            return
        }
        let segments = lines[tableStart..<mappingStart].filter { $0.count > 6 && $0[1].hasPrefix("0x") }
        let sections = lines[(mappingStart + 2)...].prefix(segments.count).map { $0.dropFirst() }
        let writable = zip(segments, sections).filter { $0.0[0] == "LOAD" && $0.0[6...].contains { $0.contains("W") } }.flatMap(\.1)
        let relocatedThenReadOnly = Set(zip(segments, sections).filter { $0.0[0] == "GNU_RELRO" }.flatMap(\.1))
        // The constants Swift marks writable go to .data.rel.ro (packaging/layout.ld): what
        // stays writable after the loader has done is only what the program writes.
        #expect(sections.contains { $0.contains(".rodata") } && !writable.contains(".rodata"), "\(sections)")
        #expect(relocatedThenReadOnly.contains(".data.rel.ro"), "\(sections)")
        let written: Set = [".data", ".bss", ".tm_clone_table", "swift5_backtrace"]
        #expect(Set(writable).subtracting(relocatedThenReadOnly).isSubset(of: written), "\(sections)")
    }

    /// The bytes of `/usr/bin/gpsfix` in the package at `deb`.
    static func binary(of deb: String) throws -> Data {
        let folder = try makeTemporaryFolder("package-contents")
        defer { try? FileManager.default.removeItem(at: folder) }
        return try Data(contentsOf: URL(fileURLWithPath: extractBinary(of: deb, into: folder)))
    }

    /// Unpacks the package at `deb` into `folder`; returns the path of its `/usr/bin/gpsfix`.
    static func extractBinary(of deb: String, into folder: URL) throws -> String {
        _ = try run("/usr/bin/dpkg-deb", ["-x", deb, folder.path])
        return folder.appendingPathComponent("usr/bin/gpsfix").path
    }

    @Test(
        "in a bare root of its release: apt installs it with its dependencies; gpsfixd serves the demo, and a gpsd through the release's libgps; gpsfix polls and decodes; installed again after removal, no unit masked; purge leaves nothing",
        arguments: [("deb12", "bookworm", "libgps.so.28"), ("deb13", "trixie", "libgps.so.30")])
    func bareRoot(release: String, suite: String, libgps: String) throws {
        let deb = try Self.package(release)
        let folder = try makeTemporaryFolder("bare-root")
        defer { try? FileManager.default.removeItem(at: folder) }
        let root = folder.appendingPathComponent("root").path
        let bootstrap = try RunningProcess("/usr/bin/mmdebstrap", ["--variant=apt", suite, root])
        #expect(bootstrap.wait(timeout: 600) == 0, "\(bootstrap.errorText.suffix(2000))")
        #expect(!FileManager.default.fileExists(atPath: root + "/usr/bin/swift"))
        let script = Self.repository.appendingPathComponent("Tests/Tools/bare_root_install.sh").path
        let capture = Binaries.fixtures.appendingPathComponent("gpsd/cat-ms352.log").path
        // gpsd 3.22, outside the root: the protocol is the same for either release's libgps.
        let gpsd = try UpstreamTests.UpstreamGPSD()
        let (install, status) = try withExtendedLifetime(gpsd) {
            let install = try RunningProcess(
                "/usr/bin/unshare",
                ["--mount", "--propagation", "private", "--pid", "--fork", "--kill-child", script, root, deb, capture, "\(gpsd.port)"])
            return (install, install.wait(timeout: 600))
        }
        let steps = install.outputText.split(separator: "\n").filter { $0.hasPrefix("STEP ") }.map { String($0.dropFirst(5)) }
        #expect(status == 0, "\(steps)\n\(install.errorText.suffix(2000))")
        #expect(steps.contains { $0.hasPrefix("installed ") && $0.hasSuffix("~\(release) install ok installed") })
        #expect(steps.contains("swift 0 none"), "no Swift in the root")
        #expect(steps.contains { $0.hasPrefix("user ") && $0.contains("dialout") }, "the gpsfix user is in dialout")
        #expect(steps.contains { $0.hasPrefix("version gpsfixd ") })
        #expect(steps.contains("config checked"))
        #expect(steps.contains { $0.hasPrefix("poll \"class\":\"TPV\"") })
        #expect(steps.contains("loaded 0 optional libraries"), "libgps and libmosquitto wait until gpsd:// or MQTT is used: \(steps)")
        #expect(steps.contains("threads woken besides SwiftNIO's: 0"), "the daemon's tasks run on its event loop: \(steps)")
        #expect(steps.contains("upstream through \(libgps)"), "gpsd read through the release's own libgps: \(steps)")
        let decoded = try run(Binaries.gpsfix, ["decode", capture]).components(separatedBy: "\"class\":\"TPV\"").count - 1
        #expect(steps.contains("decode \(decoded) TPVs"), "the same TPVs as this build's gpsfix decode: \(steps)")
        #expect(steps.contains("masked after reinstalling: 0"), "removing masks the units; installing again unmasks them: \(steps)")
        #expect(steps.contains("purged 3"), "binaries, configuration and state gone")
    }
}
