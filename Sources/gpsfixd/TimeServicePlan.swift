#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import GPSFixDevices
import GPSFixTime
import Logging

/// Which devices the time service serves and where their samples go, from the options,
/// as gpsd decides it: serial receivers only (a pseudo-terminal carries a replay, not
/// the time, unless `--time-from-pty`; a file or a gpsd upstream never); chrony's sockets
/// by gpsd's names; NTP shared memory when the system permits it (units 0 and 1 for the
/// first device as root, from unit 2 on otherwise); pulses from the kernel PPS device
/// given or attached to the port, else from the port's carrier-detect line.
struct TimeServicePlan {
    var chronySocketDirectory: String
    var sharedMemory: Bool
    var timeFromPseudoTerminals: Bool
    var timeOffset: Duration
    /// Kernel PPS devices given on the command line, for the serial devices in order.
    var ppsDevices: [String]

    func devices(for sources: [any ByteSource], logger: Logger) -> [TimeService.Device] {
        var served: [TimeService.Device] = []
        var ppsGiven = ppsDevices[...]
        for source in sources {
            guard let port = source as? SerialPort else { continue }
            let isPseudoTerminal = port.isPseudoTerminal
            if isPseudoTerminal, !timeFromPseudoTerminals {
                logger.info("no time service from a pseudo-terminal (give --time-from-pty)", metadata: ["device": "\(port.path)"])
                continue
            }
            var device = TimeService.Device(name: port.path, timeOffset: timeOffset)
            let sockets = ChronySocket.paths(forDevice: port.path, in: chronySocketDirectory)
            do throws(TimeSinkError) {
                device.receiverTimeSinks.append(try ChronySocket(path: sockets.receiverTime))
                device.pulseSinks.append(try ChronySocket(path: sockets.pulse))
            } catch {
                logger.warning("no chrony socket: \(error)", metadata: ["device": "\(port.path)"])
            }
            if sharedMemory {
                let units = SharedMemoryRefclock.units(forDeviceAt: served.count, asRoot: getuid() == 0)
                do throws(TimeSinkError) {
                    device.receiverTimeSinks.append(try SharedMemoryRefclock(unit: units.receiverTime))
                    device.receiverTimeUnit = units.receiverTime
                    device.pulseSinks.append(try SharedMemoryRefclock(unit: units.pulse))
                    device.pulseUnit = units.pulse
                } catch {
                    logger.notice("no NTP shared memory: \(error)", metadata: ["device": "\(port.path)"])
                }
            }
            // A pulse is as precise as the line it crosses: a PPS device given may be a
            // GPIO beside a USB receiver; any other pulse crosses the receiver's port.
            if let given = ppsGiven.popFirst() {
                device.pulses = KernelPPS(path: given)
                device.pulsePrecision = PulsePrecision.ofKernelDevice(given, receiverPort: port.path)
            } else {
                device.pulsePrecision = PulsePrecision.ofSerialLine(port.path)
                if let attached = KernelPPS.device(forSerialPort: port.path) {
                    device.pulses = KernelPPS(path: attached)
                } else if !isPseudoTerminal {
                    device.pulses = CarrierDetectPulses(port: port)
                }
            }
            logger.info(
                "time service",
                metadata: [
                    "device": "\(port.path)",
                    "receiver time to": "\(device.receiverTimeSinks.map(\.name))",
                    "pulses from": "\(device.pulses?.name ?? "none")",
                ])
            served.append(device)
        }
        return served
    }
}
