import Foundation

/// A process's threads, each with its name and how often it has woken (its voluntary
/// context switches), by thread id: what a test of "this thread sleeps" compares.
public struct ThreadWakeUps: Sendable {
    /// One thread, as read.
    public struct Sample: Sendable {
        /// Its name (`comm`).
        public let name: String
        /// Its voluntary context switches so far.
        public let switches: Int
    }

    /// Every thread that was alive, by thread id.
    public let threads: [String: Sample]

    /// Reads `/proc/PROCESS/task`; `process` is a process id, or `self`.
    public init(ofProcess process: String = "self") throws {
        var threads: [String: Sample] = [:]
        for thread in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/task") {
            let folder = "/proc/\(process)/task/\(thread)"
            // A thread may end between the listing and the read: it is left out.
            guard let name = try? String(contentsOfFile: folder + "/comm", encoding: .utf8),
                let status = try? String(contentsOfFile: folder + "/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
                let count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
            else { continue }
            threads[thread] = Sample(name: name.trimmingCharacters(in: .whitespacesAndNewlines), switches: count)
        }
        self.threads = threads
    }

    /// How often each thread woke since `earlier` (a thread started since, from zero).
    public func since(_ earlier: ThreadWakeUps) -> [(id: String, name: String, times: Int)] {
        threads.map { id, thread in (id, thread.name, thread.switches - (earlier.threads[id]?.switches ?? 0)) }
    }
}
