import Foundation
import GPSFixDevices

/// A receiver a test unplugs and plugs in again: a pseudo-terminal behind a symbolic link
/// that goes away with it, as udev's `/dev/serial/by-id/` links do.
///
/// Unplugging removes the link before the terminal closes. A reader that retries the link
/// then finds nothing there; were the link left behind, it would open whichever terminal
/// the kernel next gives that number: another test's, perhaps in the other test process,
/// whose reader would then see half its bytes.
public final class PluggableTerminal {
    /// The link the reader is given.
    public let link: String
    /// The terminal plugged in, if one is.
    public private(set) var terminal: PseudoTerminal?

    /// Plugs a new terminal in at `link`.
    public init(link: String) throws {
        self.link = link
        try plugIn()
    }

    /// Unplugs the terminal, if one is plugged in.
    deinit { unplug() }

    /// A new terminal at the link, in place of any there was.
    public func plugIn() throws {
        unplug()
        let terminal = try PseudoTerminal()
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: terminal.path)
        self.terminal = terminal
    }

    /// The link removed, then the terminal closed: its reader's read hangs up.
    public func unplug() {
        try? FileManager.default.removeItem(atPath: link)
        terminal = nil
    }
}
