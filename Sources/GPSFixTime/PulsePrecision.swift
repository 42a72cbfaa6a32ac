import GPSFixDevices

/// How finely a pulse's edge is stamped, as NTP's precision (a power of two of seconds),
/// by the line the pulse crosses (gpsd's two values): what chrony and ntpd are told with
/// each pulse (the shared memory's `precision`, the PPS report's).
public enum PulsePrecision {
    /// An edge stamped at a GPIO or a UART's modem-status line (by the kernel's
    /// interrupt handler, or by the daemon's thread woken by it): about a microsecond.
    public static let kernel = -20
    /// An edge that crosses a USB serial adapter, whose modem-status changes reach the
    /// host a millisecond apart at best.
    public static let usb = -10

    /// The precision of pulses carried by the serial line at `path` (its carrier-detect
    /// line, or the PPS line discipline attached to it).
    public static func ofSerialLine(_ path: String) -> Int {
        let name = SerialPort.resolved(path) ?? path
        return name.hasPrefix("/dev/ttyUSB") || name.hasPrefix("/dev/ttyACM") ? usb : kernel
    }

    /// The precision of pulses from the kernel PPS device at `path`: a serial line's, when
    /// the device is the PPS line discipline on one; the kernel's for a GPIO, whose pulses
    /// do not cross the receiver's line; the `receiverPort`'s while the kernel knows no
    /// such device yet.
    public static func ofKernelDevice(_ path: String, receiverPort: String, sysfs: String = "/sys/class/pps") -> Int {
        guard let line = KernelPPS.attachment(of: path, sysfs: sysfs) else { return ofSerialLine(receiverPort) }
        return line.isEmpty ? kernel : ofSerialLine(line)
    }
}
