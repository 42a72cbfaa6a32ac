#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import NIOConcurrencyHelpers

/// The line setting autobaud found, or the speed switched to, shared by the copies of a
/// port value (the reader's thread writes it, anyone reads it): behind a pthread mutex,
/// which ThreadSanitizer sees.
final class SharedSetting<Value: Sendable>: Sendable {
    private let value = NIOLockedValueBox<Value?>(nil)
    func withLock<Result>(_ body: (inout Value?) -> Result) -> Result { value.withLockedValue { body(&$0) } }
}

/// The descriptor of the port while the reader has it open, shared by the copies of a
/// port value, so that a pulse source (another thread) can wait on the same line and the
/// writer write to it; those holding a copy are told when the reader closes it.
final class OpenDescriptor: Sendable {
    private let descriptor = NIOLockedValueBox<Int32?>(nil)
    private let closeObservers = NIOLockedValueBox<[@Sendable () -> Void]>([])

    func set(_ value: Int32?) { descriptor.withLockedValue { $0 = value } }

    /// Forgets the descriptor, which the reader is closing, and tells the observers.
    func clear() {
        set(nil)
        for observer in closeObservers.withLockedValue({ $0 }) { observer() }
    }

    /// Runs `observer` at each ``clear()``, on the closing thread, out of the lock.
    func whenCleared(_ observer: @escaping @Sendable () -> Void) { closeObservers.withLockedValue { $0.append(observer) } }

    /// How many bytes wait unread on the open descriptor (`FIONREAD`); 0 while closed.
    func unreadBytes() -> Int {
        descriptor.withLockedValue { current in
            var count: Int32 = 0
            guard let current, ioctl(current, UInt(FIONREAD), &count) == 0 else { return 0 }
            return Int(count)
        }
    }

    /// A duplicate of the open descriptor (the caller closes it), `nil` while closed.
    func duplicate() -> Int32? {
        descriptor.withLockedValue { current in
            current.flatMap { fcntl($0, F_DUPFD_CLOEXEC, 0) }.flatMap { $0 >= 0 ? $0 : nil }
        }
    }
}

/// A serial port opened the way a GPS daemon must open one: without becoming its
/// controlling terminal, without blocking on carrier detect, exclusively (`TIOCEXCL`:
/// another process cannot open it while we hold it), in raw mode with the given framing.
/// The port's original settings are restored when it is closed.
///
/// As a ``ByteSource``, every call to ``chunks()`` opens the port afresh, so a provider
/// reopens a port that was unplugged and came back at the same path (a stable
/// `/dev/serial/by-id/...` link included).
public struct SerialPort: ByteSource {
    public let path: String
    /// The framing; with no speed, the speed is found by ``Autobaud`` when the port opens.
    public var settings: SerialSettings
    public var name: String { path }
    /// Reads the port once it is open, when given (the server's event loop); a thread of
    /// the port's own does otherwise.
    public var reactor: (any DescriptorReactor)?
    private let lineFound: SharedSetting<SerialLine>
    /// The speed configuration switched a port given its speed to, which outlasts a reopening.
    private let speedChanged: SharedSetting<Int>
    private let openDescriptor: OpenDescriptor

    public init(path: String, settings: SerialSettings = SerialSettings()) {
        self.path = path
        self.settings = settings
        lineFound = SharedSetting()
        speedChanged = SharedSetting()
        openDescriptor = OpenDescriptor()
    }

    /// Whether the path is (a link to) a pseudo-terminal's follower end: a replay or a
    /// bridge rather than a receiver.
    public var isPseudoTerminal: Bool {
        (Self.resolved(path) ?? path).hasPrefix("/dev/pts/")
    }

    /// A pseudo-terminal's writer waits for its reader; a receiver's UART does not.
    public var canWait: Bool { isPseudoTerminal }

    /// `path` with every link resolved; `nil` when it does not exist.
    public static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// Whether the receiver's bytes wait in the port's input queue, unread.
    public var hasUnreadInput: Bool { openDescriptor.unreadBytes() > 0 }

    /// A duplicate of the port's descriptor while it is open for reading (the caller
    /// closes it), for waiting on the line's modem signals; `nil` while it is closed.
    public func duplicateOpenDescriptor() -> Int32? { openDescriptor.duplicate() }

    /// Runs `body` each time the reader closes the port: a duplicate of its descriptor
    /// should be let go then, since it keeps the device open (an unplugged receiver comes
    /// back under another name while anything holds its old one).
    public func whenClosed(_ body: @escaping @Sendable () -> Void) { openDescriptor.whenCleared(body) }

    /// Opens and configures the port, returning its descriptor and its original settings.
    public func open() throws(DeviceError) -> (descriptor: Int32, original: termios) {
        let descriptor = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw .from(errno: errno, path: path, call: "open") }
        do throws(DeviceError) {
            guard ioctl(descriptor, UInt(TIOCEXCL)) == 0 else { throw .from(errno: errno, path: path, call: "ioctl(TIOCEXCL)") }
            let original = try Termios.attributes(of: descriptor, path: path)
            try Termios.apply(settings, to: descriptor, path: path)
            return (descriptor, original)
        } catch {
            Glibc.close(descriptor)
            throw error
        }
    }

    /// Closes what ``open()`` gave, its original settings restored, and no longer
    /// exclusive first: a duplicate another thread has not closed yet (a pulse source
    /// waiting on the line) would otherwise keep the flag, and every opening after it out
    /// (EBUSY) but root's.
    private static func close(_ opened: (descriptor: Int32, original: termios), path: String) {
        try? Termios.set(opened.original, on: opened.descriptor, path: path)
        _ = ioctl(opened.descriptor, UInt(TIOCNXCL))
        Glibc.close(opened.descriptor)
    }

    /// The line as set: the speed and framing given, or those autobaud found (or the
    /// speed switched to since) once it has.
    public var line: SerialLine? {
        if settings.speed == nil { return lineFound.withLock { $0 } }
        return (speedChanged.withLock({ $0 }) ?? settings.speed).map(line(at:))
    }

    /// The line at `bps`, in the framing given.
    private func line(at bps: Int) -> SerialLine {
        let parity: Character = switch settings.parity {
        case .none: "N"
        case .even: "E"
        case .odd: "O"
        }
        return SerialLine(bps: bps, parity: parity, stopBits: settings.stopBits)
    }

    /// Whether the port finds its speed as it opens: one given none, and one given its
    /// speed that configuration has switched to another since, which the receiver may
    /// have lost (a power cycle, the switch not saved): it listens at the speed switched
    /// to, then at the one given.
    public var findsSpeed: Bool { settings.speed == nil || speedChanged.withLock { $0 } != nil }

    public func chunks() -> ByteChunks {
        let port = self
        let reading = FileDescriptorReader.Reading(reactor: reactor, canWait: canWait)
        return FileDescriptorReader.chunks(path: path, atEndOfFile: { [path] in .vanished(path: path) }, reading: reading) { stop throws(DeviceError) in
            let opened: (descriptor: Int32, original: termios)
            var prelude: [UInt8] = []
            if port.findsSpeed, let (searched, found) = try port.openFindingSpeed(stopped: { stop.isStopped }) {
                // No speed given, or switched since: listened at each line setting it may
                // have until frames made sense; read on from there.
                opened = searched
                prelude = found.bytes
            } else if let speed = port.speedChanged.withLock({ $0 }) ?? port.settings.speed {
                // Given its speed: opened at it, or at the one switched to when neither
                // answered (a receiver starting, or off), waiting there; bytes that make
                // no frames search again.
                var configured = port
                configured.settings.speed = speed
                opened = try configured.open()
            } else {
                throw .noSentences(path: port.path)
            }
            port.openDescriptor.set(opened.descriptor)
            return (opened.descriptor, prelude, { [path = port.path] in
                port.openDescriptor.clear()
                Self.close(opened, path: path)
            })
        }
    }

    /// Listens at each common line setting in turn (the last one found first) until
    /// checked frames of any protocol arrive, and remembers the setting found; all on one
    /// opening of the port, each trial's setting made on it (its input of the setting
    /// before flushed): every closing would drop the line's DTR (which resets or powers
    /// down some receivers) and let another program take the port. Returns the port still
    /// open at the setting found, or `nil`, with it closed, when none gives frames or
    /// `stopped` says so first.
    func openFindingSpeed(
        stopped: () -> Bool
    ) throws(DeviceError) -> (opened: (descriptor: Int32, original: termios), found: Autobaud.Result)? {
        var opened: (descriptor: Int32, original: termios)?
        do throws(DeviceError) {
            let found = try Autobaud.detect(lines: autobaudOrder()) { (line, enough) throws(DeviceError) in
                guard !stopped() else { return [] }
                var trial = settings
                trial.take(line)
                let descriptor: Int32
                if let opened {
                    descriptor = opened.descriptor
                    try Termios.apply(trial, to: descriptor, path: path)
                    tcflush(descriptor, TCIFLUSH)
                } else {
                    var port = self
                    port.settings = trial
                    let first = try port.open()
                    opened = first
                    descriptor = first.descriptor
                }
                return FileDescriptorReader.listen(to: descriptor, for: .milliseconds(1500), stopped: stopped, enough: enough)
            }
            if let found, let opened {
                if let given = settings.speed {
                    speedChanged.withLock { $0 = found.line.bps == given ? nil : found.line.bps }
                } else {
                    lineFound.withLock { $0 = found.line }
                }
                return (opened, found)
            }
        } catch {
            if let opened { Self.close(opened, path: path) }
            throw error
        }
        if let opened { Self.close(opened, path: path) }
        return nil
    }

    /// Switches the open port to `bps` under its reader (after the receiver was told to
    /// switch), keeping its framing. When it opens again, or its bytes make no frames, it
    /// listens at `bps` first, then at the speed it was given, or, given none, at the
    /// others: a receiver that forgot the switch (a power cycle, the switch not saved) is
    /// found.
    public func changeSpeedWhileOpen(to bps: Int) throws(DeviceError) {
        guard let descriptor = openDescriptor.duplicate() else { throw .notFound(path: path) }
        defer { Glibc.close(descriptor) }
        tcdrain(descriptor)
        var settings = settings
        if let found = lineFound.withLock({ $0 }), settings.speed == nil { settings.take(found) }
        settings.speed = bps
        try Termios.apply(settings, to: descriptor, path: path)
        if self.settings.speed == nil {
            lineFound.withLock { $0?.bps = bps }
        } else {
            speedChanged.withLock { $0 = bps == self.settings.speed ? nil : bps }
        }
    }

    /// The line settings autobaud tries, the last one found first (a replugged receiver
    /// keeps its speed).
    func autobaudOrder() -> [SerialLine] {
        if let given = settings.speed {
            // Given its speed and switched since: the speed switched to, then the one given.
            return [speedChanged.withLock { $0 }, given].compactMap { $0 }.map(line(at:))
        }
        let last = lineFound.withLock { $0 }
        return (last.map { [$0] } ?? []) + Autobaud.lines.filter { $0 != last }
    }

    /// The speed autobaud found, once it has.
    public var detectedSpeed: Int? { lineFound.withLock { $0 }?.bps }
}
