import NIOCore
import NTRIPCasting

/// Takes every RTCM 3 frame of the base receiver, whole, as the receiver sent it: an NTRIP
/// server pushing them to a caster.
public protocol RTCMFrameSubscriber: Sendable {
    /// Called on the server's event loop, in the frames' order: it must only hand the frame
    /// on (to a bounded queue of its own) and return.
    func receive(rtcm3 frame: ByteBuffer)
}

/// A base station's corrections as they pass through the hub: which device is the base,
/// what its stream carries (for the caster's source table), and who takes its frames. Used
/// on the hub's loop only.
///
/// The base is the first device to send RTCM 3: a second receiver's frames would mix two
/// stations' observations in one stream, which no rover can use, so they are counted and
/// left out.
final class CorrectionFeed {
    /// The device whose frames are served, once one sent any.
    private(set) var base: String?
    /// What the base's stream carries so far.
    private(set) var summary = RTCMStreamSummary()
    /// What the caster counted; its stream count is the sessions'.
    var statistics = CasterStatistics()
    private var subscribers: [any RTCMFrameSubscriber] = []
    /// The caster's sessions streaming now.
    private var streams: [ObjectIdentifier: CasterSession] = [:]
    /// Set once the caster listens: it describes the stream even while no rover is connected.
    var hasCaster = false
    private let eventLoop: any EventLoop
    /// Whether the streams' writes of this turn of the loop are to be flushed at its end:
    /// the frames of one read go out in one write a rover, not one each.
    private var flushScheduled = false

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Whether anyone takes the frames: the providers copy them out only then.
    var isWanted: Bool { hasCaster || !subscribers.isEmpty }

    func add(_ subscriber: any RTCMFrameSubscriber) {
        subscribers.append(subscriber)
    }

    func add(stream: CasterSession) {
        streams[ObjectIdentifier(stream)] = stream
        statistics.streams = streams.count
        statistics.streamsServed += 1
    }

    func remove(stream: CasterSession) {
        streams[ObjectIdentifier(stream)] = nil
        statistics.streams = streams.count
    }

    /// Hands `frame` of `device` to every taker, if `device` is the base.
    func forward(_ frame: [UInt8], from device: String, at time: NIODeadline = .now()) {
        if base == nil { base = device }
        guard base == device else {
            statistics.framesOfOthers += 1
            return
        }
        statistics.baseFrames += 1
        summary.note(frame, atNanoseconds: time.uptimeNanoseconds)
        let buffer = ByteBuffer(bytes: frame)
        for subscriber in subscribers { subscriber.receive(rtcm3: buffer) }
        for stream in streams.values {
            if stream.send(buffer) { statistics.framesSent += 1 } else { statistics.framesDropped += 1 }
        }
        if !streams.isEmpty, !flushScheduled {
            flushScheduled = true
            eventLoop.assumeIsolated().execute { [self] in
                flushScheduled = false
                for stream in streams.values { stream.flush() }
            }
        }
    }
}

extension GPSFixServer {
    /// Gives every RTCM 3 frame of the base receiver to `subscriber`, from now on.
    public func subscribe(rtcm3 subscriber: any RTCMFrameSubscriber) async {
        let hub = self.hub
        try? await hub.eventLoop.submit {
            hub.corrections.add(subscriber)
            hub.sentenceDemand.set(corrections: hub.corrections.isWanted)
        }.get()
    }
}
