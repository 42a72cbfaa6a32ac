#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import GPSFixDevices
import NIOCore
import NIOPosix
import TestSupport
import Testing

/// Pipe channels on descriptors they own: a channel that fails has closed its descriptor,
/// whether SwiftNIO refused it before making the channel or failed after. What is closed
/// is told by the file, not the number, which another thread may be given at once.
@Suite("Pipe channels owning their descriptor")
struct PipeOwnershipTests {
    let loop = MultiThreadedEventLoopGroup.singleton.next()

    @Test("a descriptor refused before the channel is made (a regular file) is closed by the helper")
    func refusedBeforeTheChannel() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-owned-\(UUID().uuidString)").path
        let file = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(file >= 0)
        defer { unlink(path) }
        let made = NIOPipeBootstrap.takingOwnership(of: file, as: .input, on: loop) { _ in }
        await #expect(throws: (any Error).self) { try await made.get() }
        #expect(!Self.processHasOpen(path), "the file is still open")
    }

    @Test("a channel whose preparation fails, after SwiftNIO made it, has closed its descriptor")
    func failedAfterTheChannel() async throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let writeEnd = ends[1]
        defer { close(writeEnd) }
        let prepared = Locked(false)
        let made = NIOPipeBootstrap.takingOwnership(of: ends[0], as: .input, on: loop) { _ in
            prepared.withLock { $0 = true }
            throw ChannelError.inappropriateOperationForState
        }
        await #expect(throws: ChannelError.inappropriateOperationForState) { try await made.get() }
        #expect(prepared.withLock { $0 }, "the channel was made before it failed")
        // A pipe's write end reports an error once no read end is open.
        var entry = pollfd(fd: writeEnd, events: Int16(POLLOUT), revents: 0)
        #expect(poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLERR) != 0, "the pipe's read end is still open")
    }

    /// Whether any of the process's descriptors is open on `path`.
    private static func processHasOpen(_ path: String) -> Bool {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path }
    }
}
