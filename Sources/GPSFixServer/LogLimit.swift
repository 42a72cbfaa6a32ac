import Logging
import NIOCore

/// A warning about what peers can make happen as often as they like (a client cut off, a
/// hold run out), logged once a minute at most: those in between are counted, and the
/// next line says how many. Every one is counted in the metrics all the same.
struct LogLimit {
    /// The shortest time between two lines.
    static let interval = TimeAmount.minutes(1)

    private var lastLogged: NIODeadline?
    private var notLogged = 0

    /// Whether to log the event at `now`: the metadata to add to its line (how many were
    /// not logged since the last), or `nil` to count it and say nothing.
    mutating func admit(at now: NIODeadline) -> Logger.Metadata? {
        if let lastLogged, now - lastLogged < Self.interval {
            notLogged += 1
            return nil
        }
        lastLogged = now
        defer { notLogged = 0 }
        return notLogged > 0 ? ["notLogged": "\(notLogged)"] : [:]
    }
}
