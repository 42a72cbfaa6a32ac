#if canImport(Glibc)
import Glibc
#endif
import GPSFix

/// Serial line settings: speed and framing, as a GPS receiver's port needs them.
public struct SerialSettings: Hashable, Sendable {
    public enum Parity: Hashable, Sendable { case none, even, odd }

    /// Bits per second; `nil` keeps what the port has (and is what autobaud searches for).
    public var speed: Int?
    public var dataBits: Int
    public var parity: Parity
    public var stopBits: Int

    /// Raw 8N1, the framing of nearly every NMEA receiver.
    public init(speed: Int? = nil, dataBits: Int = 8, parity: Parity = .none, stopBits: Int = 1) {
        self.speed = speed
        self.dataBits = dataBits
        self.parity = parity
        self.stopBits = stopBits
    }

    /// Takes the speed, parity and stop bits of `line` (eight data bits).
    mutating func take(_ line: SerialLine) {
        speed = line.bps
        parity = line.parity == "O" ? .odd : line.parity == "E" ? .even : .none
        stopBits = line.stopBits
    }

    /// The speeds GPSFix accepts, in the order autobaud tries them.
    public static let commonSpeeds = [9600, 4800, 38400, 115_200, 57600, 19200, 230_400, 460_800, 921_600]
}

/// The termios calls, all in one place: raw mode, speed and framing, and restoring.
enum Termios {
    static func speedConstant(_ speed: Int) -> speed_t? {
        switch speed {
        case 4800: speed_t(B4800)
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 115_200: speed_t(B115200)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 921_600: speed_t(B921600)
        default: nil
        }
    }

    /// Reads the current settings of `descriptor`.
    static func attributes(of descriptor: Int32, path: String) throws(DeviceError) -> termios {
        var attributes = termios()
        guard tcgetattr(descriptor, &attributes) == 0 else { throw .from(errno: errno, path: path, call: "tcgetattr") }
        return attributes
    }

    /// Puts `descriptor` in raw mode with `settings` (the equivalent of `cfmakeraw` plus
    /// `CLOCAL | CREAD` and the framing), waiting for nothing: reads return what is there.
    static func apply(_ settings: SerialSettings, to descriptor: Int32, path: String) throws(DeviceError) {
        var attributes = try Self.attributes(of: descriptor, path: path)
        cfmakeraw(&attributes)
        attributes.c_cflag |= tcflag_t(CLOCAL | CREAD)
        attributes.c_cflag &= ~(tcflag_t(CSIZE | PARENB | PARODD | CSTOPB) | tcflag_t(CRTSCTS))
        switch settings.dataBits {
        case 7: attributes.c_cflag |= tcflag_t(CS7)
        default: attributes.c_cflag |= tcflag_t(CS8)
        }
        switch settings.parity {
        case .none: break
        case .even: attributes.c_cflag |= tcflag_t(PARENB)
        case .odd: attributes.c_cflag |= tcflag_t(PARENB | PARODD)
        }
        if settings.stopBits == 2 { attributes.c_cflag |= tcflag_t(CSTOPB) }
        if let speed = settings.speed {
            guard let constant = speedConstant(speed) else { throw .unsupportedSpeed(speed) }
            cfsetispeed(&attributes, constant)
            cfsetospeed(&attributes, constant)
        }
        // A read returns as soon as one byte is there. c_cc is a tuple in Swift: index it
        // by the named constants through its bytes, never by a guessed tuple element.
        withUnsafeMutableBytes(of: &attributes.c_cc) { controls in
            controls[Int(VMIN)] = 1
            controls[Int(VTIME)] = 0
        }
        try set(attributes, on: descriptor, path: path)
    }

    static func set(_ attributes: termios, on descriptor: Int32, path: String) throws(DeviceError) {
        var attributes = attributes
        guard tcsetattr(descriptor, TCSANOW, &attributes) == 0 else { throw .from(errno: errno, path: path, call: "tcsetattr") }
    }
}
