import ChildProcesses
import Foundation
import Logging
import MDNSAnnouncement
import TestSupport
import Testing

/// The daemon announces NMEA 0183 out through avahi's publisher, a child process: given
/// a stand-in publisher that stays (as avahi's does while the daemon serves).
@Suite("mDNS announcement: the publisher child", .serialized)
struct ServiceAnnouncementTests {
    /// A publisher that stays until it is told to end, in `folder`. It first writes the
    /// environment it was started with to `publish.environment`, whole or not at all.
    static func stayingPublisher(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("publish").path
        let script = "#!/bin/sh\nenv -0 > \"$0.partial\" && mv \"$0.partial\" \"$0.environment\"\nexec sleep 60\n"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    /// The environment the publisher at `path` wrote, once it has (within 10 s).
    static func environment(ofPublisher path: String) async throws -> [Substring] {
        for _ in 0..<1000 where !FileManager.default.fileExists(atPath: path + ".environment") {
            try await Task.sleep(for: .milliseconds(10))
        }
        return try String(contentsOfFile: path + ".environment", encoding: .utf8).split(separator: "\0")
    }

    /// This process's threads waiting for a publisher's end (`gpsfix-mdns`), by thread ID.
    static func watchingThreads() -> Set<String> {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(threads.filter { (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)) == "gpsfix-mdns\n" })
    }

    /// Waits (for 10 s at most) until a task sleeps on `clock`.
    static func waitForSleeper(on clock: ManualClock) async throws {
        for _ in 0..<1000 where clock.sleeping == 0 { try await Task.sleep(for: .milliseconds(10)) }
    }

    @Test("the publisher waits for avahi's answer on the clock, holding no thread, and gets none of the daemon's secrets or descriptors; nor does any child")
    func childEnvironmentAndWaiting() async throws {
        let folder = try makeTemporaryFolder("mdns")
        defer { try? FileManager.default.removeItem(at: folder) }
        let publisher = try Self.stayingPublisher(in: folder)
        let secrets = ["GPSFIX_MQTT_PASSWORD": "hunter2-mqtt", "GPSFIX_NTRIP_PASSWORD": "hunter2-ntrip", "BROKER_Password": "hunter2-b"]
        for (name, value) in secrets { setenv(name, value, 1) }
        setenv("GPSFIX_TEST_HARMLESS_NEIGHBOUR", "kept?", 1)
        defer { for name in Array(secrets.keys) + ["GPSFIX_TEST_HARMLESS_NEIGHBOUR"] { unsetenv(name) } }

        // A descriptor the daemon holds without close-on-exec (a library's socket, say).
        var inheritable: [Int32] = [0, 0]
        try #require(pipe(&inheritable) == 0)
        defer { inheritable.forEach { close($0) } }

        let clock = ManualClock()
        async let started = ServiceAnnouncement(
            name: "GPSFix test", type: "_nmea-0183._tcp", port: 10110, publisher: publisher, clock: clock,
            logger: Logger(label: "test"))
        // The wait for avahi's answer is a sleep on the clock (a blocking sleep would never
        // show here, and would hold one of the pool's threads for 300 ms).
        try await Self.waitForSleeper(on: clock)
        #expect(clock.sleeping == 1)
        clock.advance(by: ServiceAnnouncement.settling)
        let announcement = await started
        #expect(announcement.isAnnounced)
        let child = try #require(announcement.processID)
        // Stopped and reaped on a failure's way out too (the test's end withdraws it, reaped).
        defer {
            if kill(child, 0) == 0 {
                kill(child, SIGKILL)
                waitpid(child, nil, 0)
            }
        }
        // What the child was started with, in its own words: `/proc/PID/environ` reads
        // empty while the stand-in's shell is replaced by `sleep`.
        let environment = try await Self.environment(ofPublisher: publisher)
        #expect(environment.contains { $0.hasPrefix("PATH=") }, "the rest of the environment is passed on")
        #expect(!environment.contains { $0.contains("hunter2") }, "\(environment)")
        #expect(!environment.contains { $0.hasPrefix("GPSFIX_") })
        // Any child started without an environment given (the doctor's chronyc) alike:
        // checked while the secrets are set, in this test's one window of setenv.
        let listing = folder.appendingPathComponent("default-environment").path
        let lister = try ChildProcess.spawn("/usr/bin/env", ["-0"], output: .file(listing))
        var status: Int32 = 0
        try waitUntil("env to end", within: 10) { waitpid(lister, &status, WNOHANG) == lister }
        let inherited = try String(contentsOfFile: listing, encoding: .utf8).split(separator: "\0")
        #expect(inherited.contains { $0.hasPrefix("PATH=") }, "the rest of the environment is passed on")
        #expect(!inherited.contains { $0.contains("hunter2") }, "\(inherited)")
        // Once it is `sleep`, the child holds its standard streams and nothing else.
        func command() -> String? { try? String(contentsOfFile: "/proc/\(child)/comm", encoding: .utf8) }
        for _ in 0..<1000 where command() != "sleep\n" { try await Task.sleep(for: .milliseconds(10)) }
        try #require(command() == "sleep\n")
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(child)/fd").sorted()
        #expect(descriptors == ["0", "1", "2"])
        await announcement.withdraw()
        #expect(kill(child, 0) != 0, "withdrawn: the child has ended and been reaped")
    }

    @Test("a publisher that ends while the daemon serves is reaped and started again after a wait on the clock, doubling, the first again after a steady life; none once withdrawn")
    func publisherStartedAgain() async throws {
        let folder = try makeTemporaryFolder("mdns")
        defer { try? FileManager.default.removeItem(at: folder) }
        let publisher = try Self.stayingPublisher(in: folder)
        let clock = ManualClock()
        async let started = ServiceAnnouncement(
            name: "GPSFix test", type: "_nmea-0183._tcp", port: 10110, publisher: publisher, clock: clock,
            logger: Logger(label: "test"))
        try await Self.waitForSleeper(on: clock)
        clock.advance(by: ServiceAnnouncement.settling)
        let announcement = await started
        var children = [try #require(announcement.processID)]
        // Whatever fails, no publisher outlives the test.
        defer {
            for child in children + [announcement.processID].compactMap({ $0 }) where kill(child, 0) == 0 {
                kill(child, SIGKILL)
                waitpid(child, nil, 0)
            }
        }

        /// Kills the running publisher from outside (the OOM killer, an operator), then
        /// waits until it has been reaped (a zombie still answers kill) and the wait before
        /// the next one has begun.
        func killPublisher() async throws {
            let child = try #require(announcement.processID)
            kill(child, SIGKILL)
            try waitUntil("the ended publisher to be reaped", within: 10) { kill(child, 0) != 0 }
            try await Self.waitForSleeper(on: clock)
            #expect(announcement.processID == nil, "not announced while it waits")
        }
        /// Moves the clock past the wait, and past the new publisher's settling; returns
        /// once its end is waited for (killed before, it would have ended at once).
        var watchers = Self.watchingThreads()
        func awaitRestart(after wait: Duration) async throws {
            clock.advance(by: wait)
            try waitUntil("a publisher started again", within: 10) { announcement.processID != nil }
            let child = try #require(announcement.processID)
            #expect(!children.contains(child))
            #expect(kill(child, 0) == 0)
            children.append(child)
            try await Self.waitForSleeper(on: clock)
            clock.advance(by: ServiceAnnouncement.settling)
            try waitUntil("the new publisher's end waited for", within: 10) { !Self.watchingThreads().subtracting(watchers).isEmpty }
            watchers.formUnion(Self.watchingThreads())
        }

        try await killPublisher()
        try await awaitRestart(after: ServiceAnnouncement.firstRestartDelay)
        // The second end: twice the wait.
        try await killPublisher()
        clock.advance(by: ServiceAnnouncement.firstRestartDelay)
        try await Self.waitForSleeper(on: clock)
        #expect(announcement.processID == nil, "started again before twice the first wait")
        try await awaitRestart(after: ServiceAnnouncement.firstRestartDelay)
        // One that ran its steady life: the first wait again.
        clock.advance(by: ServiceAnnouncement.steadyLife)
        try await killPublisher()
        try await awaitRestart(after: ServiceAnnouncement.firstRestartDelay)

        // Withdrawn while it waits to start one again: none is started.
        try await killPublisher()
        await announcement.withdraw()
        #expect(announcement.processID == nil)
        #expect(clock.sleeping == 0, "the wait was given up")
        clock.advance(by: ServiceAnnouncement.longestRestartDelay)
        #expect(announcement.processID == nil)
        #expect(children.allSatisfy { kill($0, 0) != 0 }, "every publisher ended and reaped")
    }

    @Test("what counts as a secret: every GPSFIX_ variable and every name that says so")
    func secrets() {
        let kept = ChildEnvironment.withoutSecrets([
            "PATH=/usr/bin", "GPSFIX_MQTT_PASSWORD=a", "GPSFIX_NTRIP_PASSWORD=b", "GPSFIX_ANYTHING=c", "DB_PASSWORD=d",
            "api_token=e", "AWS_SECRET_ACCESS_KEY=f", "DBUS_SYSTEM_BUS_ADDRESS=unix:path=/x", "NOTE=PASSWORD=g",
        ])
        #expect(kept == ["PATH=/usr/bin", "DBUS_SYSTEM_BUS_ADDRESS=unix:path=/x", "NOTE=PASSWORD=g"])
    }
}
