import Foundation
import GPSFix
import GPSFixDevices
import GPSFixServer
import Logging
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
import NIOPosix
#endif

/// Devices read by the server's event loop itself (``GPSFixServer/descriptorReactor``):
/// the bytes arrive on the loop's thread, and a device that goes away ends the reading.
@Suite("Devices read on the event loop", .serialized)
struct EventLoopReadingTests {
    static func server() -> GPSFixServer {
        GPSFixServer(
            configuration: .init(socketPath: nil, release: "test"), group: MultiThreadedEventLoopGroup.singleton,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    /// The calling thread's name.
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines)
    }

    /// How many of the process's descriptors are open on `path`.
    static func descriptors(openOn path: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path }.count
    }

    /// How many of this process's threads are device threads (``DeviceThread/name``).
    static func deviceThreads() -> Int {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return threads.filter {
            (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
                == DeviceThread.name
        }.count
    }

    @Test("a pseudo-terminal's bytes are handed over on the loop's thread, whole, with no thread of its own left, and its master closing ends the reading as a vanished device")
    func readsOnTheLoop() async throws {
        let threadsBefore = Self.deviceThreads()
        let server = Self.server()
        var terminal: PseudoTerminal? = try PseudoTerminal()
        var serial = SerialPort(path: terminal!.path, settings: SerialSettings(speed: 9600))
        serial.reactor = server.descriptorReactor
        let port = serial
        let received = Locked<(bytes: [UInt8], threads: Set<String>)>(([], []))
        let reading = Task {
            try await port.chunks().forEach(onReadingThread: { chunk in
                let thread = Self.threadName()
                received.withLock {
                    $0.bytes += chunk.bytes
                    $0.threads.insert(thread)
                }
            })
        }
        let sentences = Array(String(repeating: "$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47\r\n", count: 200).utf8)
        try await Task.sleep(for: .milliseconds(200))
        try await terminal!.write(sentences)
        let deadline = ContinuousClock.now + .seconds(10)
        while received.withLock({ $0.bytes.count }) < sentences.count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let (bytes, threads) = received.withLock { $0 }
        #expect(bytes == sentences)
        #expect(threads.count == 1 && threads.allSatisfy { $0.hasPrefix("NIO-") }, "\(threads)")
        // The thread that opened the port ended once the loop read it.
        try waitUntil("the opening thread ended", within: 5) { Self.deviceThreads() <= threadsBefore }
        terminal = nil  // closes the master: the slave hangs up
        await #expect(throws: DeviceError.vanished(path: port.path)) { try await reading.value }
        // The port's descriptor and the loop's duplicate of it are both closed.
        #expect(Self.descriptors(openOn: port.path) == 0)
        await server.shutdown()
    }

    @Test("cancelling the reader stops the loop's reading and releases the port, which opens again at once")
    func cancellationReleasesThePort() async throws {
        let server = Self.server()
        let terminal = try PseudoTerminal()
        var serial = SerialPort(path: terminal.path, settings: SerialSettings(speed: 9600))
        serial.reactor = server.descriptorReactor
        let port = serial
        let first = Task { try await port.chunks().forEach(onReadingThread: { _ in }) }
        try await Task.sleep(for: .milliseconds(200))
        first.cancel()
        try await first.value
        // The port is exclusive while open: reading it again works only if it was closed.
        let again = Locked<[UInt8]>([])
        let second = Task { try await port.chunks().forEach(onReadingThread: { chunk in again.withLock { $0 += chunk.bytes } }) }
        try await Task.sleep(for: .milliseconds(200))
        try await terminal.write(Array("$GPTXT,01,01,02,again*00\r\n".utf8))
        let deadline = ContinuousClock.now + .seconds(10)
        while again.withLock({ $0.isEmpty }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(again.withLock { $0 } == Array("$GPTXT,01,01,02,again*00\r\n".utf8))
        second.cancel()
        try await second.value
        await server.shutdown()
    }
}
