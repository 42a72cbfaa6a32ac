#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal: the mock serial port.
///
/// Whatever is written to the master comes out of the slave, which any program opens by
/// its path exactly as it opens a real serial port, termios calls included (a pty
/// accepts them and ignores the speed). Tests and `gpsfix replay` write recorded NMEA
/// into the master; the daemon reads the slave.
public final class PseudoTerminal: @unchecked Sendable {
    /// The master side, written to by the replayer.
    public let master: Int32
    /// The slave's path (`/dev/pts/N`), opened by the reader.
    public let path: String
    /// Kept open so the slave does not hang up while no reader has it open.
    private let slave: Int32

    /// Opens a new pseudo-terminal in raw mode (no echo, no line-ending translation).
    public init() throws(DeviceError) {
        var master: Int32 = -1
        var slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw .from(errno: errno, path: "/dev/ptmx", call: "openpty") }
        self.master = master
        self.slave = slave
        path = String(cString: ttyname(slave))
        try Termios.apply(SerialSettings(), to: slave, path: path)
    }

    deinit {
        close(master)
        close(slave)
    }

    /// Writes all of `bytes` to the master, waiting while the pty's buffer is full.
    public func write(_ bytes: [UInt8]) throws(DeviceError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(master, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw .from(errno: errno, path: path, call: "write")
            }
            offset += written
        }
    }
}
