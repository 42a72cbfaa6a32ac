import GPSFix

/// Reads descriptors on a thread it already runs (the server's event loop), so that a
/// device's reads need no thread of their own: each read then costs the one wake-up of
/// that thread, where the parsed reports are also sent, as in gpsd's single loop.
///
/// A ``ByteSource`` that opens a descriptor (a serial port, a pseudo-terminal) hands it
/// to a reactor when it is given one, and reads it on a thread of its own otherwise.
public protocol DescriptorReactor: Sendable {
    /// Reads `descriptor` as it becomes readable and hands each chunk, stamped as it was
    /// read, to `handler` on the reactor's thread, until the descriptor hangs up, fails
    /// or reaches its end, or the registration is stopped; then calls `ended`, once (with
    /// the error, if any). The reactor never closes `descriptor` itself. When `canWait`,
    /// the reactor may pause the reading while its consumers are behind.
    func read(
        _ descriptor: Int32, canWait: Bool, handler: @escaping @Sendable (ByteChunk) -> Void,
        ended: @escaping @Sendable ((any Error)?) -> Void
    ) -> any ReactorRegistration
}

/// A descriptor being read by a ``DescriptorReactor``.
public protocol ReactorRegistration: Sendable {
    /// Stops the reading; `ended` follows.
    func stop()
}
