import Foundation
import GPSDProtocol
import GPSFix
@testable import GPSFixServer
import Logging
import NIOCore
import NIOEmbedded
import Testing

/// When the hub holds back the sources that can wait for lagging watchers, and for how
/// long: a hub on an embedded event loop, whose clock the tests move, and watchers whose
/// channels the tests make lag and catch up.
@Suite("Holding sources back for lagging watchers")
struct HoldBackTests {
    final class Rig {
        let loop = EmbeddedEventLoop()
        let hub: Hub

        /// A hub holding back for at most `limit`, with a pseudo-terminal (a source that can
        /// wait) and a serial receiver (one that cannot).
        init(limit: TimeAmount = .seconds(2)) {
            hub = Hub(
                eventLoop: loop, release: "test", holdBackLimit: limit,
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            hub.add(device: DeviceInfo(path: "/dev/pts/9"), canWait: true)
            hub.add(device: DeviceInfo(path: "/dev/ttyUSB0"), canWait: false)
        }

        /// A connected client that sent `?WATCH=watch;`.
        func watcher(_ watch: String) throws -> EmbeddedChannel {
            let channel = EmbeddedChannel(handler: ClientSession(hub: hub), loop: loop)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
            try channel.writeInbound(ByteBuffer(string: "?WATCH=\(watch);\n"))
            return channel
        }

        /// The client's unsent bytes go past its high-water mark.
        func lag(_ channel: EmbeddedChannel) {
            channel.isWritable = false
            channel.pipeline.fireChannelWritabilityChanged()
        }

        /// The client read down to its low-water mark.
        func catchUp(_ channel: EmbeddedChannel) {
            channel.isWritable = true
            channel.pipeline.fireChannelWritabilityChanged()
        }

        /// It catches up and lags again at once, as a client reading in bursts does.
        func lagAgain(_ channel: EmbeddedChannel) {
            catchUp(channel)
            lag(channel)
        }

        var isHolding: Bool { hub.readingHold.isHolding }

        /// `device` opened as an NMEA receiver, or named by a binary driver.
        func announce(_ device: String, identifiedAs driver: String? = nil) {
            let event = driver.map { DeviceEvent(device: device, kind: .identified, receiver: ReceiverIdentity(driver: $0, readsBinary: true)) }
                ?? DeviceEvent(device: device, kind: .activated, receiver: ReceiverIdentity(driver: "NMEA0183"))
            hub.publish(.device(event), from: device)
        }
    }

    static let json = #"{"enable":true,"json":true}"#

    @Test("a hold that runs out is followed by four times as long read; one that ends as its watcher catches up, by none")
    func restAfterAHoldThatRanOut() throws {
        let rig = Rig()
        let watcher = try rig.watcher(Self.json)
        rig.lag(watcher)
        #expect(rig.isHolding)
        rig.loop.advanceTime(by: .seconds(2))
        #expect(!rig.isHolding, "the hold ran out")
        rig.lagAgain(watcher)
        #expect(!rig.isHolding, "held again at once")
        rig.loop.advanceTime(by: .milliseconds(7999))
        rig.lagAgain(watcher)
        #expect(!rig.isHolding, "held again before four times the hold")
        rig.loop.advanceTime(by: .milliseconds(1))
        rig.lagAgain(watcher)
        #expect(rig.isHolding, "not held after the rest")
        // Caught up within the hold: the next lag is held at once, and the first hold's
        // timer does not end the second.
        rig.loop.advanceTime(by: .seconds(1))
        rig.catchUp(watcher)
        #expect(!rig.isHolding)
        rig.lag(watcher)
        #expect(rig.isHolding)
        rig.loop.advanceTime(by: .milliseconds(1500))
        #expect(rig.isHolding, "the first hold's timer ended the second")
        rig.loop.advanceTime(by: .milliseconds(500))
        #expect(!rig.isHolding)
    }

    @Test("watchers lagging one after the other hold the sources back for the limit in a row at most")
    func oneHoldWhicheverWatchersLag() throws {
        let rig = Rig()
        let first = try rig.watcher(Self.json), second = try rig.watcher(Self.json)
        rig.lag(first)
        rig.loop.advanceTime(by: .milliseconds(1500))
        rig.lag(second)
        rig.catchUp(first)
        #expect(rig.isHolding, "the second still lags")
        rig.loop.advanceTime(by: .milliseconds(500))
        #expect(!rig.isHolding, "held past the limit for the second")
        rig.lagAgain(first)
        #expect(!rig.isHolding)
    }

    @Test("watchers of no stream, of the time service alone, or of a source that cannot wait hold nothing back; nor does a limit of 0")
    func whatHoldsNothingBack() throws {
        let rig = Rig()
        for watch in [#"{"enable":true}"#, #"{"enable":true,"pps":true}"#, #"{"enable":true,"json":true,"device":"/dev/ttyUSB0"}"#] {
            let watcher = try rig.watcher(watch)
            rig.lag(watcher)
            #expect(!rig.isHolding, "held back for \(watch)")
        }
        let unlimited = Rig(limit: .zero)
        unlimited.lag(try unlimited.watcher(Self.json))
        #expect(!unlimited.isHolding)
        let watcher = try rig.watcher(#"{"enable":true,"nmea":true,"device":"/dev/pts/9"}"#)
        rig.lag(watcher)
        #expect(rig.isHolding)
    }

    @Test("a watcher that lagged through a device's DEVICE notices is told the device as it is once it has caught up, held for or not: a driver named meanwhile is not missed for good")
    func deviceNoticesMissedWhileLagging() throws {
        let device = "/dev/pts/9"
        for holdRunsOut in [false, true] {
            let rig = Rig()
            let watcher = try rig.watcher(Self.json)
            rig.announce(device)
            rig.loop.run()
            rig.lag(watcher)
            if holdRunsOut { rig.loop.advanceTime(by: .seconds(2)) }
            rig.announce(device, identifiedAs: "SiRF")
            rig.loop.run()
            rig.catchUp(watcher)
            rig.loop.run()
            #expect(try Self.lines(sentTo: watcher).compactMap { Self.driver(in: $0, of: device) } == ["none", "NMEA0183", "SiRF"],
                    "hold ran out: \(holdRunsOut)")
            // Told once: a second lag without a notice missed tells nothing again.
            rig.lag(watcher)
            rig.catchUp(watcher)
            rig.loop.run()
            #expect(try watcher.readOutbound(as: ByteBuffer.self) == nil)
        }
    }

    @Test("a watcher that catches up while the hub flushes (the socket took the bytes) is sent what is queued for it then, and flushed ever after")
    func catchingUpWithinAFlush() throws {
        let serial = "/dev/ttyUSB0", terminal = "/dev/pts/9"
        let rig = Rig()
        let watcher = try rig.watcher(Self.json)
        // As a socket does: a flush that writes the client's bytes makes it writable again.
        try watcher.pipeline.syncOperations.addHandler(DrainsOnFlush(), position: .first)
        rig.announce(serial)
        rig.loop.run()
        rig.lag(watcher)
        // Lost: a serial port is not held back for the watcher.
        rig.announce(serial, identifiedAs: "SiRF")
        // A report held for the watcher: its flush lets the watcher catch up, which sends the
        // DEVICE it lost from within the flush.
        rig.hub.publish(.fix(DeviceReportTests.fix(second: 1)), from: terminal)
        rig.loop.run()
        rig.hub.publish(.fix(DeviceReportTests.fix(second: 2)), from: terminal)
        rig.loop.run()
        let lines = try Self.lines(sentTo: watcher)
        #expect(lines.compactMap { Self.driver(in: $0, of: serial) } == ["none", "NMEA0183", "SiRF"], "\(lines)")
        #expect(lines.filter { $0.contains(#""class":"TPV""#) }.count == 2, "\(lines)")
    }

    /// Fires a writability change to the handlers after it when a flush passes while the
    /// embedded channel is marked unwritable: what SwiftNIO does once the socket has taken
    /// the bytes down to the low-water mark.
    final class DrainsOnFlush: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer

        func flush(context: ChannelHandlerContext) {
            context.flush()
            guard let channel = context.channel as? EmbeddedChannel, !channel.isWritable else { return }
            channel.isWritable = true
            context.fireChannelWritabilityChanged()
        }
    }

    /// The lines a watcher was sent, in order.
    static func lines(sentTo channel: EmbeddedChannel) throws -> [String] {
        var lines: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            lines += String(buffer: buffer).split(separator: "\n").map(String.init)
        }
        return lines
    }

    /// The driver a DEVICE or DEVICES line gives `device` ("none" when it names none), or
    /// `nil` for a line that does not speak of it.
    static func driver(in line: String, of device: String) -> String? {
        guard let report = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
        let devices = report["devices"] as? [[String: Any]] ?? [report]
        guard let entry = devices.first(where: { $0["class"] as? String == "DEVICE" && $0["path"] as? String == device }) else { return nil }
        return entry["driver"] as? String ?? "none"
    }
}
