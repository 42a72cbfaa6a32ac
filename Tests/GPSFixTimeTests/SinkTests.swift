#if canImport(Glibc)
import Glibc
#endif
import CTimeService
import Foundation
import GPSFix
@testable import GPSFixTime
import TestSupport
import Testing

/// A unit's NTP shared-memory segment, attached read-only as ntpd attaches it, and
/// removed when the test is done with it.
final class AttachedSegment {
    let segment: UnsafeMutablePointer<gpsfix_shm_time>
    private let identifier: Int32

    init(unit: Int) throws {
        identifier = shmget(key_t(0x4E54_5030 + unit), 0, 0)
        try #require(identifier >= 0, "no segment for unit \(unit)")
        guard let address = shmat(identifier, nil, SHM_RDONLY), address != UnsafeMutableRawPointer(bitPattern: -1) else {
            shmctl(identifier, IPC_RMID, nil)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        segment = address.assumingMemoryBound(to: gpsfix_shm_time.self)
    }

    deinit {
        shmdt(segment)
        shmctl(identifier, IPC_RMID, nil)
    }
}

@Suite("Time sinks")
struct SinkTests {
    let sample = TimeSample(
        real: WallTime(seconds: 1_800_000_001), clock: WallTime(seconds: 1_800_000_000, nanoseconds: 999_876_543))

    @Test("chrony's socket gets chrony's 40-byte sample: the clock as a timeval, the exact offset, the magic")
    func chronySample() throws {
        let folder = try makeTemporaryFolder("chrony")
        defer { try? FileManager.default.removeItem(at: folder) }
        let paths = ChronySocket.paths(forDevice: "/dev/serial/by-id/usb-u-blox-if00", in: folder.path)
        #expect(paths.receiverTime == folder.path + "/chrony.clk.usb-u-blox-if00.sock")
        #expect(paths.pulse == folder.path + "/chrony.usb-u-blox-if00.sock")
        let chronyd = try SockSampleSocket(path: paths.receiverTime, timeout: .seconds(2))
        try ChronySocket(path: paths.receiverTime).send(sample, precision: -1)
        let received = try #require(chronyd.receive())
        #expect(received.size == 40)
        #expect(received.sample.magic == 0x534f_434b)
        #expect(received.sample.seconds == 1_800_000_000 && received.sample.microseconds == 999_876)
        // The offset is the true time less the system clock at the measurement, to the
        // nanosecond, as chrony's sock_sample defines it: not less the timeval, whose
        // truncation to microseconds would move every pulse by up to one.
        #expect(abs(received.sample.offset - 0.000_123_457) < 1e-12, "\(received.sample.offset)")
        #expect(received.sample.pulse == 0 && received.sample.leap == 0)
    }

    @Test("with no chronyd the sample is refused as unheard; a socket that appears later gets the next one")
    func socketAppearsLater() throws {
        let folder = try makeTemporaryFolder("chrony-late")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.path + "/chrony.clk.gps0.sock"
        let sink = try ChronySocket(path: path)
        #expect(throws: TimeSinkError.noListener(path)) { try sink.send(sample, precision: -1) }
        do {
            let chronyd = try SockSampleSocket(path: path, timeout: .seconds(2))
            try sink.send(sample, precision: -1)
            #expect(chronyd.receive()?.sample.magic == 0x534f_434b)
        }
        // chronyd restarted: a new socket at the same path.
        let restarted = try SockSampleSocket(path: path, timeout: .seconds(2))
        try sink.send(sample, precision: -1)
        #expect(restarted.receive()?.size == 40)
    }

    @Test("a shared-memory unit is written with the mode 1 protocol: count bumped twice, valid set, both times exact")
    func sharedMemory() throws {
        // A unit far above any ntpd's, removed afterwards.
        let unit = 3000 + Int(getpid() % 1000)
        let sink = try SharedMemoryRefclock(unit: unit)
        let attached = try AttachedSegment(unit: unit)
        defer { withExtendedLifetime(attached) {} }
        let segment = attached.segment
        #expect(segment.pointee.mode == 1 && segment.pointee.valid == 0 && segment.pointee.leap == 3, "unsynchronised until written")
        try sink.send(sample, precision: -1)
        try sink.send(sample, precision: -1)
        let written = segment.pointee
        #expect(written.count == 4 && written.valid == 1)
        #expect(written.clockTimeStampSec == 1_800_000_001 && written.clockTimeStampNSec == 0)
        #expect(written.receiveTimeStampSec == 1_800_000_000 && written.receiveTimeStampNSec == 999_876_543)
        #expect(written.receiveTimeStampUSec == 999_876)
        #expect(written.precision == -1 && written.leap == 0)
        #expect(sink.name == "shm:NTP\(unit)")
    }

    @Test("an owner-only unit that exists writable by others (made by another before the daemon) is refused, saying so; made owner-only, it is attached")
    func sharedMemoryWritableByOthers() throws {
        let unit = 4000 + Int(getpid() % 1000)
        let identifier = shmget(key_t(0x4E54_5030 + unit), MemoryLayout<gpsfix_shm_time>.size, IPC_CREAT | 0o666)
        try #require(identifier >= 0)
        defer { shmctl(identifier, IPC_RMID, nil) }
        let refusal = TimeSinkError.writableByOthers(segment: "NTP\(unit)", mode: 0o666, owner: Int(geteuid()))
        #expect(throws: refusal) { try SharedMemoryRefclock(unit: unit, ownerOnly: true) }
        #expect(refusal.description.hasPrefix("NTP\(unit) exists with mode 666, made or owned by uid \(geteuid()): anyone who may write it"))
        var status = shmid_ds()
        try #require(shmctl(identifier, IPC_STAT, &status) == 0)
        status.shm_perm.mode = 0o600
        try #require(shmctl(identifier, IPC_SET, &status) == 0)
        let sink = try SharedMemoryRefclock(unit: unit, ownerOnly: true)
        try sink.send(sample, precision: -1)
    }

    @Test(
        "a root-only unit another user made is refused even after its owner was set to root and its mode to 0600: its maker may set them back",
        .enabled(if: getuid() == 0, "makes a segment as another user"))
    func sharedMemoryMadeByAnother() throws {
        let unit = 5000 + Int(getpid() % 1000)
        let key = 0x4E54_5030 + unit
        // Made by nobody, with its own interface (IPC_CREAT | 0666), through Python's ctypes.
        let maker = Process()
        maker.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        maker.arguments = [
            "--reuid", "65534", "--regid", "65534", "--clear-groups", "/usr/bin/python3", "-c",
            "import ctypes, sys; sys.exit(ctypes.CDLL(None).shmget(\(key), \(MemoryLayout<gpsfix_shm_time>.size), 0o1666) < 0)",
        ]
        try maker.run()
        maker.waitUntilExit()
        try #require(maker.terminationStatus == 0)
        let identifier = shmget(key_t(key), 0, 0)
        try #require(identifier >= 0)
        defer { shmctl(identifier, IPC_RMID, nil) }
        var status = shmid_ds()
        try #require(shmctl(identifier, IPC_STAT, &status) == 0)
        status.shm_perm.uid = 0
        status.shm_perm.mode = 0o600
        try #require(shmctl(identifier, IPC_SET, &status) == 0)
        #expect(throws: TimeSinkError.writableByOthers(segment: "NTP\(unit)", mode: 0o600, owner: 65534)) {
            try SharedMemoryRefclock(unit: unit, ownerOnly: true)
        }
    }

    @Test("shared-memory units: 2n and 2n+1 as root, as gpsd takes them, from unit 2 on otherwise")
    func units() {
        #expect(SharedMemoryRefclock.units(forDeviceAt: 0, asRoot: true) == (0, 1))
        #expect(SharedMemoryRefclock.units(forDeviceAt: 1, asRoot: true) == (2, 3))
        #expect(SharedMemoryRefclock.units(forDeviceAt: 0, asRoot: false) == (2, 3))
    }
}
