import Synchronization
import SystemdSupport
import TestSupport
import Testing

/// A notifier that remembers what it was told.
final class FakeNotifier: ServiceNotifier {
    private let messages = Locked<[String]>([])
    var sent: [String] { messages.withLock { $0 } }
    func notify(_ state: String) { messages.withLock { $0.append(state) } }
}

/// Facts the test changes while the reporter runs.
final class FakeDaemon: Sendable {
    let ready = Atomic<Bool>(false)
    let responsive = Atomic<Bool>(true)
    let status = Locked("waiting for data, 0 clients")
}

@Suite("Service manager reporter", .timeLimit(.minutes(1)))
struct ReporterTests {
    @Test("READY once the daemon is ready, STATUS only on change, WATCHDOG only while the loop answers")
    func reports() async throws {
        let notifier = FakeNotifier()
        let daemon = FakeDaemon()
        let clock = ManualClock()
        // Watchdog 800 ms: the reporter ticks every 100 ms and pings every 400 ms.
        let reporter = ServiceManagerReporter(notifier: notifier, watchdogInterval: .milliseconds(800), clock: clock)
        let task = Task {
            await reporter.run(
                isReady: { daemon.ready.load(ordering: .relaxed) }, status: { daemon.status.withLock { $0 } },
                isResponsive: { _ in daemon.responsive.load(ordering: .relaxed) })
        }
        for _ in 0..<4 { await clock.advanceWhenSleeping(by: .milliseconds(50)) }
        await clock.waitForSleepers()
        #expect(notifier.sent.isEmpty)  // not ready yet
        daemon.ready.store(true, ordering: .relaxed)
        await clock.advanceWhenSleeping(by: .milliseconds(50))
        for _ in 0..<12 { await clock.advanceWhenSleeping(by: .milliseconds(100)) }  // 1.2 s
        daemon.status.withLock { $0 = "3D fix, 9/12 satellites, 1 clients" }
        for _ in 0..<12 { await clock.advanceWhenSleeping(by: .milliseconds(100)) }  // 1.2 s
        await clock.waitForSleepers()
        let pingsWhileHealthy = notifier.sent.filter { $0 == "WATCHDOG=1" }.count
        daemon.responsive.store(false, ordering: .relaxed)
        for _ in 0..<12 { await clock.advanceWhenSleeping(by: .milliseconds(100)) }
        task.cancel()
        await task.value

        let sent = notifier.sent
        #expect(sent.first == "READY=1")
        #expect(sent.filter { $0.hasPrefix("STATUS=") } == ["STATUS=waiting for data, 0 clients", "STATUS=3D fix, 9/12 satellites, 1 clients"])
        #expect(pingsWhileHealthy == 6, "a ping every 400 ms over 2.4 s")
        #expect(sent.filter { $0 == "WATCHDOG=1" }.count == pingsWhileHealthy)  // a stalled loop gets no pings
    }

    @Test("READY is sent after the timeout even if the daemon never becomes ready")
    func readyTimeout() async throws {
        let notifier = FakeNotifier()
        let clock = ManualClock()
        let reporter = ServiceManagerReporter(notifier: notifier, watchdogInterval: nil, readyTimeout: .milliseconds(200), clock: clock)
        let task = Task { await reporter.run(isReady: { false }, status: { "no fix" }, isResponsive: { _ in true }) }
        for _ in 0..<3 { await clock.advanceWhenSleeping(by: .milliseconds(50)) }
        await clock.waitForSleepers()
        #expect(notifier.sent.isEmpty)
        await clock.advanceWhenSleeping(by: .milliseconds(50))
        await clock.advanceWhenSleeping(by: .seconds(1))
        await clock.waitForSleepers()
        task.cancel()
        await task.value
        #expect(notifier.sent == ["READY=1", "STATUS=no fix"])
    }

    @Test("STOPPING=1 is the last word: what a reporter still winding down sends after it is dropped")
    func stoppingIsLast() {
        let fake = FakeNotifier()
        let notifier = StoppingLastNotifier(fake)
        notifier.notify("WATCHDOG=1")
        notifier.notify("STOPPING=1")
        notifier.notify("WATCHDOG=1")
        notifier.notify("STATUS=3D fix")
        #expect(fake.sent == ["WATCHDOG=1", "STOPPING=1"])
    }
}
