import GPSDProtocol
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
}
