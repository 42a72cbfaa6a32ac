import Foundation

/// A wait in a test that ran out: says what did not happen.
public struct TimedOut: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}

/// Polls `condition` every 20 ms until it holds, or throws after `seconds`, naming `what`
/// was awaited: no wait in a test is unbounded.
public func waitUntil(_ what: String, within seconds: Double = 20, _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { throw TimedOut(description: "\(what) did not happen within \(seconds) s") }
        usleep(20_000)
    }
}
