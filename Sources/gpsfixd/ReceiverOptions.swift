import ArgumentParser
import GPSFixDevices
import Logging
import UBXConfiguration

/// `--receiver`: the settings the daemon keeps a u-blox receiver at, applied each time the
/// device is opened or speaks again after a silence (the `[receiver]` table of the file).
struct ReceiverOptions: ParsableArguments {
    @Option(
        name: .customLong("receiver"),
        help: """
            Keep a u-blox receiver configured: KEY=VALUE;... with rate, gnss, output, baud, dynamic-model, timepulse, \
            survey-in, fixed-position, navigate or rtcm (as gpsfix ubx set takes them), save=true to write flash too, \
            port=uart1|uart2|usb, device=PATH when several are served. Repeat for several receivers.
            """)
    var receiver: [String] = []

    @Option(
        name: .customLong("control-socket"),
        help: """
            Where gpsfix ubx reaches the receivers the daemon holds (mode 0600; root and the daemon's user only); \
            named after the clients' socket by default (gpsfixd.sock: gpsfixd-control.sock).
            """)
    var controlSocket: String?

    /// The control socket: the one asked for, or one named after the clients' socket
    /// (`gpsfixd.sock` gives `gpsfixd-control.sock`), so that two daemons never share one.
    func controlSocket(beside clients: String?) -> String {
        if let controlSocket { return controlSocket }
        let clients = clients ?? GPSFixDaemon.defaultSocket
        return clients.hasSuffix(".sock") ? String(clients.dropLast(5)) + "-control.sock" : clients + "-control"
    }

    /// One receiver's table.
    struct Table {
        var device: String?
        var settings = ReceiverSettings()
        /// Whether the settings go to flash too (flash wears: only when asked).
        var save = false
        var port: ReceiverPort?
    }

    func validate() throws {
        _ = try tables()
    }

    /// Refuses the tables that would lock the daemon out of a receiver, loop, or be
    /// silently ignored, given the daemon's `--speed`, `--silence-timeout` and `devices`:
    /// a `baud` other than `--speed` (once the keeper has changed the receiver's speed, a
    /// restart opens the port at `--speed`, where it no longer answers), a `rate` slower
    /// than the silence watch (the device would fall silent between solutions, and the
    /// keeper read it back at each), and two tables for one device (only one would be kept).
    func validate(speed: Int?, silenceTimeout: Double, devices: [String]) throws {
        let tables = try tables()
        if let rate = tables.lazy.compactMap(\.settings.rate).first(where: { 1 / $0 >= silenceTimeout }) {
            throw ValidationError(
                "a --receiver table's rate \(rate) Hz gives a solution every \(1 / rate) s, not within --silence-timeout \(silenceTimeout) s: the device would fall silent between solutions; give a --silence-timeout longer than \(1 / rate)"
            )
        }
        if let speed, let baud = tables.lazy.compactMap(\.settings.baudRate).first(where: { $0 != speed }) {
            throw ValidationError(
                "--speed \(speed) differs from a --receiver table's baud \(baud): after the change, a restart would open the port at \(speed), where the receiver no longer answers; leave --speed out (the port finds the speed) or give the same"
            )
        }
        let named = tables.map { table in table.device.map { DeviceName($0)?.description ?? $0 } ?? (devices.count == 1 ? devices[0] : "the only device") }
        if let twice = named.firstRepeated {
            throw ValidationError("two --receiver tables for \(twice): a receiver keeps one table")
        }
    }

    func tables() throws -> [Table] {
        try receiver.map { spec in
            var table = Table()
            for part in spec.split(separator: ";") {
                let pair = part.split(separator: "=", maxSplits: 1).map { String($0).trimmed }
                guard pair.count == 2 else { throw ValidationError("--receiver: '\(part)' is not KEY=VALUE") }
                switch pair[0] {
                case "device": table.device = pair[1]
                case "save":
                    guard let save = Bool(pair[1]) else { throw ValidationError("--receiver: save is true or false") }
                    table.save = save
                case "port":
                    guard let port = ReceiverPort(rawValue: pair[1]) else { throw ValidationError("--receiver: port is uart1, uart2 or usb") }
                    table.port = port
                default:
                    do {
                        try table.settings.set(pair[0], to: pair[1])
                    } catch {
                        throw ValidationError("--receiver: \(error)")
                    }
                }
            }
            guard !table.settings.isEmpty else { throw ValidationError("--receiver '\(spec)' sets nothing") }
            return table
        }
    }

    /// A keeper for each table, of the serial receiver among `sources` it names (or the only
    /// one). Tables that save share one ``FlashRecord`` in the state directory
    /// (`stateDirectory` makes it); when it cannot be made, their keepers save nothing to
    /// flash, and say why when they would.
    func keepers(
        sources: [any ByteSource], receivers: WritableReceivers, stateDirectory: () throws -> String, logger: Logger
    ) throws -> [ReceiverKeeper] {
        let tables = try tables()
        let flash: FlashRecord
        do {
            flash =
                tables.contains(where: \.save)
                ? FlashRecord(path: try stateDirectory() + "/receiver-flash") : FlashRecord(unavailable: "no table saves")
        } catch {
            flash = FlashRecord(unavailable: "\(error)")
        }
        if let failure = flash.readFailure {
            logger.warning("\(failure): a table saved before is saved to its receiver's flash once more")
        }
        return try tables.map { table in
            let matching = sources.filter { source in table.device.map { DeviceName($0)?.description == source.name } ?? true }
            guard matching.count == 1, let port = matching.first as? SerialPort, let control = receivers[port.name] else {
                if let device = table.device { throw ValidationError("--receiver: \(device) is not a serial device served") }
                throw ValidationError("--receiver: \(sources.count) devices are served; name the receiver with device=PATH")
            }
            return ReceiverKeeper(
                control: control, receiverPort: table.port ?? ReceiverPort(guessingFor: SerialPort.resolved(port.path) ?? port.path),
                settings: table.settings, save: table.save, flash: flash, logger: logger)
        }
    }
}

extension String {
    fileprivate var trimmed: String { String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
}

extension Array where Element: Equatable {
    /// The first element that occurs again later in the array (a device named twice).
    var firstRepeated: Element? {
        first { element in filter { $0 == element }.count > 1 }
    }
}
