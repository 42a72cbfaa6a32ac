import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The build `scripts/demo` makes first: without the package's TLS trait, so that a
/// newcomer's first build compiles no BoringSSL. It must still serve the demo, and must
/// refuse a TLS address rather than connect in the clear. A release check (it builds the
/// product again, in a scratch folder of its own): `scripts/release-checks` runs it.
@Suite(
    "The demo's build, without TLS", .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["GPSFIX_RELEASE_CHECKS"] != nil,
        "a release check (scripts/release-checks): builds the product again"))
struct DemoBuildTests {
    static let scratch = PackageTests.repository.appendingPathComponent(".build-demo").path

    /// `scripts/demo`'s build, once for the suite: the binary's path.
    static let binary: Result<String, any Error> = Result {
        let arguments = ["build", "--product", "gpsfix", "--disable-default-traits", "--scratch-path", scratch]
        let build = try RunningProcess("/usr/bin/env", ["swift"] + arguments + ["--package-path", PackageTests.repository.path])
        guard build.wait(timeout: 1800) == 0 else {
            throw PackageFailure(description: "the build without TLS failed: \(build.errorText.suffix(2000))")
        }
        let folder = try run("/usr/bin/env", ["swift"] + arguments + ["--package-path", PackageTests.repository.path, "--show-bin-path"])
        return folder.trimmingCharacters(in: .whitespacesAndNewlines) + "/gpsfix"
    }

    @Test("it compiles no BoringSSL, serves the demo's TPVs, and refuses ntrips:// and https:// addresses, naming the missing trait")
    func demoBuild() throws {
        let gpsfix = try Self.binary.get()
        let built = try FileManager.default.contentsOfDirectory(atPath: URL(fileURLWithPath: gpsfix).deletingLastPathComponent().path)
        #expect(!built.contains { $0.hasPrefix("CNIOBoringSSL") }, "BoringSSL was compiled: \(built.filter { $0.contains("SSL") })")
        let folder = try makeTemporaryFolder("demo-build")
        defer { try? FileManager.default.removeItem(at: folder) }
        let gpsfixd = folder.appendingPathComponent("gpsfixd").path
        try FileManager.default.createSymbolicLink(atPath: gpsfixd, withDestinationPath: gpsfix)
        let socket = folder.appendingPathComponent("s.sock").path

        let daemon = try RunningProcess(gpsfixd, ["--demo", "--socket", socket])
        defer { daemon.stop() }
        let client = try #require(LineClient.connect(unixPath: socket, within: 20), "the demo did not start: \(daemon.errorText.suffix(500))")
        client.send(#"?WATCH={"enable":true,"json":true};"# + "\n")
        let tpv = client.readLines(until: { $0.contains(#""class":"TPV""#) && $0.contains(#""mode":3"#) }, timeout: 20)
        #expect(tpv != nil, "no TPV with a fix from the demo")

        for options in [["--ntrip", "ntrips://rover:secret@caster.example:2102/MOUNT"], ["--traccar", "https://traccar.example/", "--traccar-id", "1", "--state-directory", folder.path]] {
            let refused = try RunningProcess(gpsfixd, ["--demo", "--socket", folder.appendingPathComponent("r.sock").path] + options)
            let status = refused.wait(timeout: 20)
            if status == nil { refused.stop(SIGKILL) }
            #expect(status != nil && status != 0, "\(options[0]) with TLS was not refused")
            #expect(refused.errorText.contains("built without TLS"), "\(refused.errorText.suffix(500))")
            if options[1].contains("secret") { #expect(!refused.errorText.contains("secret"), "the password reached the error") }
        }
    }
}
