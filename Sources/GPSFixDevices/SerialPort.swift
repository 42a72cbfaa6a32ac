#if canImport(Glibc)
import Glibc
#endif
import GPSFix

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
    public var settings: SerialSettings
    public var name: String { path }

    public init(path: String, settings: SerialSettings = SerialSettings()) {
        self.path = path
        self.settings = settings
    }

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

    public func chunks() -> AsyncThrowingStream<[UInt8], any Error> {
        let port: (descriptor: Int32, original: termios)
        do {
            port = try open()
        } catch {
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        let path = self.path
        return FileDescriptorReader.chunks(of: port.descriptor, path: path, endOfFileIsVanishing: true) {
            try? Termios.set(port.original, on: port.descriptor, path: path)
            Glibc.close(port.descriptor)
        }
    }
}
