#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GPSFix
import GPSFixDevices
@testable import GPSFixTime
import TestSupport
import Testing

/// The kernel PPS devices this machine has (none on most build machines and in CI).
let kernelPPSDevices = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? [])
    .filter { $0.hasPrefix("pps") }.sorted().map { "/dev/" + $0 }

@Suite("Pulse sources", .timeLimit(.minutes(1)))
struct PulseSourceTests {
    @Test("the kernel PPS device of a serial port is found through /sys/class/pps/*/path, links resolved")
    func findsAttachedDevice() throws {
        let folder = try makeTemporaryFolder("sysfs")
        defer { try? FileManager.default.removeItem(at: folder) }
        let sysfs = folder.appendingPathComponent("pps").path
        for (name, attached) in [("pps0", "/dev/ttyAMA0\n"), ("pps1", "\n"), ("pps2", folder.path + "/ttyS4\n")] {
            try FileManager.default.createDirectory(atPath: "\(sysfs)/\(name)", withIntermediateDirectories: true)
            try attached.write(toFile: "\(sysfs)/\(name)/path", atomically: true, encoding: .utf8)
        }
        try #require(FileManager.default.createFile(atPath: folder.path + "/ttyS4", contents: nil))
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/gps0", withDestinationPath: folder.path + "/ttyS4")
        #expect(KernelPPS.device(forSerialPort: "/dev/ttyAMA0", sysfs: sysfs) == "/dev/pps0")
        #expect(KernelPPS.device(forSerialPort: folder.path + "/gps0", sysfs: sysfs) == "/dev/pps2")
        #expect(KernelPPS.device(forSerialPort: "/dev/ttyUSB0", sysfs: sysfs) == nil)
        #expect(KernelPPS.device(forSerialPort: "/dev/ttyUSB0", sysfs: folder.path + "/none") == nil)
    }

    @Test("a pulse is as precise as the line it crosses: a USB adapter's millisecond, else the kernel's microsecond")
    func precisionFollowsThePulsesLine() throws {
        let folder = try makeTemporaryFolder("sysfs")
        defer { try? FileManager.default.removeItem(at: folder) }
        let sysfs = folder.appendingPathComponent("pps").path
        // pps0: a GPIO (no line); pps1: the PPS line discipline on a USB adapter; pps2: on a UART.
        for (name, attached) in [("pps0", "\n"), ("pps1", "/dev/ttyUSB0\n"), ("pps2", "/dev/ttyS0\n")] {
            try FileManager.default.createDirectory(atPath: "\(sysfs)/\(name)", withIntermediateDirectories: true)
            try attached.write(toFile: "\(sysfs)/\(name)/path", atomically: true, encoding: .utf8)
        }
        #expect(PulsePrecision.ofSerialLine("/dev/ttyUSB0") == PulsePrecision.usb)
        #expect(PulsePrecision.ofSerialLine("/dev/ttyACM1") == PulsePrecision.usb)
        #expect(PulsePrecision.ofSerialLine("/dev/ttyAMA0") == PulsePrecision.kernel)
        // A GPIO's pulses beside a USB receiver are stamped by the kernel: the receiver's
        // line does not make them a millisecond late.
        #expect(PulsePrecision.ofKernelDevice("/dev/pps0", receiverPort: "/dev/ttyUSB0", sysfs: sysfs) == PulsePrecision.kernel)
        #expect(PulsePrecision.ofKernelDevice("/dev/pps1", receiverPort: "/dev/ttyAMA0", sysfs: sysfs) == PulsePrecision.usb)
        #expect(PulsePrecision.ofKernelDevice("/dev/pps2", receiverPort: "/dev/ttyUSB0", sysfs: sysfs) == PulsePrecision.kernel)
        // Not there yet (it is opened again later): the receiver's port decides, as before.
        #expect(PulsePrecision.ofKernelDevice("/dev/pps7", receiverPort: "/dev/ttyUSB0", sysfs: sysfs) == PulsePrecision.usb)
        #expect(PulsePrecision.ofKernelDevice("/dev/pps7", receiverPort: "/dev/ttyAMA0", sysfs: sysfs) == PulsePrecision.kernel)
        #expect(PulsePrecision.usb == -10 && PulsePrecision.kernel == -20)
    }

    @Test("edges faster than they are taken are bounded: the newest kept, the rest counted")
    func overrunBounded() async throws {
        let (sent, taken) = (Locked(false), Locked(false))
        let edges = PulseThread.pulses(of: "test") { outlet, _ in
            for second in 0..<1000 { outlet.send(WallTime(seconds: second)) }
            sent.withLock { $0 = true }
            // One more once the consumer has emptied the stream, which carries the count.
            for _ in 0..<500 where !taken.withLock({ $0 }) { usleep(10_000) }
            outlet.send(WallTime(seconds: 1000))
            outlet.finish()
        }
        var iterator = edges.makeAsyncIterator()
        var received: [PulseEdge] = []
        for _ in 0..<500 where !sent.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        for _ in 0..<PulseThread.capacity { received.append(try #require(try await iterator.next())) }
        taken.withLock { $0 = true }
        while let edge = try await iterator.next() { received.append(edge) }
        #expect(received.map(\.time.seconds) == [996, 997, 998, 999, 1000])
        #expect(received.last?.droppedBefore == 996)
    }

    @Test("a path that is no PPS device ends the pulses with the failed ioctl named")
    func notAPPSDevice() async throws {
        var iterator = KernelPPS(path: "/dev/null").pulses().makeAsyncIterator()
        await #expect {
            _ = try await iterator.next()
        } throws: { error in
            "\(error)".contains("/dev/null: ioctl(PPS_GETCAP) failed")
        }
    }

    @Test("a kernel PPS device gives one edge a second, stamped by the kernel", .enabled(if: !kernelPPSDevices.isEmpty, "no /dev/pps* on this machine"))
    func kernelPulses() async throws {
        var iterator = KernelPPS(path: kernelPPSDevices[0]).pulses().makeAsyncIterator()
        let first = try #require(try await iterator.next())
        let second = try #require(try await iterator.next())
        let gap = second.time.duration(since: first.time)
        #expect(gap > .milliseconds(900) && gap < .milliseconds(1100), "\(gap)")
    }

    @Test("carrier detect on a line without modem-status interrupts (a pseudo-terminal) ends with that reason")
    func carrierDetectOnPty() async throws {
        let terminal = try PseudoTerminal()
        let port = SerialPort(path: terminal.path, settings: SerialSettings(speed: 9600))
        #expect(port.duplicateOpenDescriptor() == nil, "closed until read")
        var reading = port.chunkStream().makeAsyncIterator()
        try await terminal.write(Array("$GPTXT,01,01,02,hello*2F\r\n".utf8))
        _ = try await reading.next()
        var pulses = CarrierDetectPulses(port: port).pulses().makeAsyncIterator()
        await #expect(throws: PulseSourceError.noModemStatus(path: terminal.path)) { _ = try await pulses.next() }
    }
}
