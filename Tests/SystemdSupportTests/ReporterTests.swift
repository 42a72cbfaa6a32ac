import Synchronization
import SystemdSupport
import Testing

/// A notifier that remembers what it was told.
final class FakeNotifier: ServiceNotifier {
    private let messages = Mutex<[String]>([])
    var sent: [String] { messages.withLock { $0 } }
    func notify(_ state: String) { messages.withLock { $0.append(state) } }
}

/// Facts the test changes while the reporter runs.
final class FakeDaemon: Sendable {
    let ready = Atomic<Bool>(false)
    let responsive = Atomic<Bool>(true)
    let status = Mutex("waiting for data, 0 clients")
}

@Suite("Service manager reporter")
struct ReporterTests {
    @Test("READY once the daemon is ready, STATUS only on change, WATCHDOG only while the loop answers")
    func reports() async throws {
        let notifier = FakeNotifier()
        let daemon = FakeDaemon()
        let reporter = ServiceManagerReporter(notifier: notifier, watchdogInterval: .milliseconds(400))
        let task = Task {
            await reporter.run(
                isReady: { daemon.ready.load(ordering: .relaxed) }, status: { daemon.status.withLock { $0 } },
                isResponsive: { _ in daemon.responsive.load(ordering: .relaxed) })
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(notifier.sent.isEmpty)  // not ready yet
        daemon.ready.store(true, ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(1100))
        daemon.status.withLock { $0 = "3D fix, 9/12 satellites, 1 clients" }
        try await Task.sleep(for: .milliseconds(1100))
        let pingsWhileHealthy = notifier.sent.filter { $0 == "WATCHDOG=1" }.count
        daemon.responsive.store(false, ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(1000))
        task.cancel()
        await task.value

        let sent = notifier.sent
        #expect(sent.first == "READY=1")
        #expect(sent.filter { $0.hasPrefix("STATUS=") } == ["STATUS=waiting for data, 0 clients", "STATUS=3D fix, 9/12 satellites, 1 clients"])
        #expect((8...12).contains(pingsWhileHealthy), "pings every 200 ms over 2.2 s: \(pingsWhileHealthy)")
        #expect(sent.filter { $0 == "WATCHDOG=1" }.count == pingsWhileHealthy)  // a stalled loop gets no pings
    }

    @Test("READY is sent after the timeout even if the daemon never becomes ready")
    func readyTimeout() async throws {
        let notifier = FakeNotifier()
        let reporter = ServiceManagerReporter(notifier: notifier, watchdogInterval: nil, readyTimeout: .milliseconds(200))
        let task = Task { await reporter.run(isReady: { false }, status: { "no fix" }, isResponsive: { _ in true }) }
        try await Task.sleep(for: .milliseconds(500))
        task.cancel()
        await task.value
        #expect(notifier.sent == ["READY=1", "STATUS=no fix"])
    }
}
