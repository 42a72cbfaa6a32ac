import GPSFixDevices

/// The receivers of the control socket by every name a tool may ask for one by: the path
/// each was configured with, and the device that path's links resolve to
/// (`/dev/serial/by-id/...` gives `/dev/ttyACM0`).
///
/// Resolved once, before the socket serves: `realpath` reads the file system, which the
/// event loop never waits on, so a conversation's `H` only compares strings. A link made
/// later, or a receiver that comes back under another device, is found by its configured
/// path; `gpsfix ubx` asks by the name it was given, then by the device it resolves to.
enum ReceiverNames {
    /// `receivers`, by device path, also under each path's resolved device; a configured
    /// path wins over another's resolution to the same name.
    static func index<Receiver>(
        _ receivers: [String: Receiver], resolving resolve: (String) -> String? = SerialPort.resolved
    ) -> [String: Receiver] {
        var index: [String: Receiver] = [:]
        for (path, receiver) in receivers {
            if let device = resolve(path) { index[device] = receiver }
        }
        index.merge(receivers) { _, configured in configured }
        return index
    }
}
