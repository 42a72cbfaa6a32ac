import NIOConcurrencyHelpers
import NIOCore
import NTRIPCasting

/// Takes every RTCM 3 frame of the base receiver, whole, as the receiver sent it: an NTRIP
/// server pushing them to a caster.
public protocol RTCMFrameSubscriber: Sendable {
    /// Called on the server's event loop, in the frames' order: it must only hand the frame
    /// on (to a bounded queue of its own) and return.
    func receive(rtcm3 frame: ByteBuffer)
}

/// The streams the caster serves: the base receiver's, and what `--ntrip` fetches from
/// another caster, relayed.
enum CasterStream: Hashable, Sendable {
    case base, relay
}

/// A base station's corrections as they pass through the hub: which device is the base,
/// what each stream carries (for the caster's source table), and who takes its frames.
/// Used on the hub's loop only.
///
/// The base is the first device to send RTCM 3: a second receiver's frames would mix two
/// stations' observations in one stream, which no rover can use, so they are counted and
/// left out.
final class CorrectionFeed {
    /// The device whose frames are served, once one sent any.
    private(set) var base: String?
    /// What each stream carries so far.
    private(set) var summaries: [CasterStream: RTCMStreamSummary] = [:]
    /// What the caster counted; the streams open now are counted when read
    /// (``currentStatistics``).
    var statistics = CasterStatistics()
    private var subscribers: [any RTCMFrameSubscriber] = []
    /// The caster's sessions streaming now, and which stream each takes.
    private var sessions: [ObjectIdentifier: (session: CasterSession, stream: CasterStream)] = [:]
    /// Set once the caster listens: it describes the stream even while no rover is connected.
    var hasCaster = false
    /// The relay handing frames over, when the caster relays.
    var relaySource: CorrectionRelay?
    private let eventLoop: any EventLoop
    /// Whether the sessions' writes of this turn of the loop are to be flushed at its end:
    /// the frames of one read go out in one write a rover, not one each.
    private var flushScheduled = false

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// The counts now, the streams open and the relay's drops on the way to the hub included.
    var currentStatistics: CasterStatistics {
        var current = statistics
        current.streams = sessions.count
        current.relayDropped = relaySource?.dropped ?? 0
        return current
    }

    /// Whether anyone takes the base's frames: the providers copy them out only then.
    var isWanted: Bool { hasCaster || !subscribers.isEmpty }

    func add(_ subscriber: any RTCMFrameSubscriber) {
        subscribers.append(subscriber)
    }

    func add(_ session: CasterSession, to stream: CasterStream) {
        sessions[ObjectIdentifier(session)] = (session, stream)
        statistics.streamsServed += 1
    }

    func remove(_ session: CasterSession) {
        sessions[ObjectIdentifier(session)] = nil
    }

    /// Hands `frame` of `device` to every taker, if `device` is the base.
    func forward(_ frame: [UInt8], from device: String) {
        if base == nil { base = device }
        guard base == device else {
            statistics.framesOfOthers += 1
            return
        }
        statistics.baseFrames += 1
        let buffer = ByteBuffer(bytes: frame)
        for subscriber in subscribers { subscriber.receive(rtcm3: buffer) }
        serve(frame, buffer, on: .base)
    }

    /// Hands `frame`, fetched from another caster, to the relay's sessions.
    func relay(_ frame: [UInt8]) {
        statistics.relayedFrames += 1
        serve(frame, ByteBuffer(bytes: frame), on: .relay)
    }

    private func serve(_ frame: [UInt8], _ buffer: ByteBuffer, on stream: CasterStream) {
        guard hasCaster else { return }
        summaries[stream, default: RTCMStreamSummary()].note(frame, atNanoseconds: NIODeadline.now().uptimeNanoseconds)
        var wrote = false
        for (session, sessionStream) in sessions.values where sessionStream == stream {
            if session.send(buffer) {
                statistics.framesSent += 1
                wrote = true
            } else {
                statistics.framesDropped += 1
            }
        }
        if wrote, !flushScheduled {
            flushScheduled = true
            eventLoop.assumeIsolated().execute { [self] in
                flushScheduled = false
                for (session, _) in sessions.values { session.flush() }
            }
        }
    }
}

/// What `--ntrip` fetches from another caster, relayed by this daemon's caster under a
/// mountpoint of its own, for a fleet of rovers that should not each hold an account
/// there. The NTRIP client hands each frame over from its loop; the caster serves it once
/// it listens (frames before that are nobody's). At most 64 KiB are on their way to the
/// hub's loop at once: past that (a hub loop that lags behind a flooding caster) frames
/// are dropped and counted.
public final class CorrectionRelay: Sendable {
    private struct State {
        var hub: Hub?
        var inTransit = 0
        var dropped = 0
    }

    private let state = NIOLockedValueBox(State())
    static let maximumInTransit = 64 * 1024

    public init() {}

    /// Relays one whole frame, from any thread.
    public func forward(_ frame: [UInt8]) {
        let hub = state.withLockedValue { state -> Hub? in
            guard let hub = state.hub else { return nil }
            guard state.inTransit + frame.count <= Self.maximumInTransit else {
                state.dropped += 1
                return nil
            }
            state.inTransit += frame.count
            return hub
        }
        guard let hub else { return }
        hub.eventLoop.execute { [self] in
            state.withLockedValue { $0.inTransit -= frame.count }
            hub.corrections.relay(frame)
        }
    }

    /// Frames dropped on their way to the hub.
    var dropped: Int { state.withLockedValue { $0.dropped } }

    func attach(_ hub: Hub) {
        state.withLockedValue { $0.hub = hub }
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
