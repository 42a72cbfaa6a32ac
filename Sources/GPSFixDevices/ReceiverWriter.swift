import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The one way anything is written to a receiver: whole frames (RTCM corrections from
/// NTRIP, UBX configuration), from one event loop, never blocking it. One writer per
/// device, shared by everything that writes to it, so frames from different writers never
/// interleave mid-frame.
///
/// Frames wait in a queue bounded in bytes; when it is full the oldest are dropped
/// (counted), since a receiver is better served by no correction than by a stale one,
/// and frames that waited longer than ``maximumAge`` are dropped too (a configuration
/// conversation sends one frame at a time and retries what is not answered). The port is
/// written through a SwiftNIO pipe channel over a duplicate of the descriptor its reader
/// opened, so a slow line (a receiver at 9600 bps) makes the channel unwritable rather
/// than blocking: frames are handed to it only while it is writable, and always whole.
/// Reads from the receiver go on unaffected. When the port is closed (the receiver
/// unplugged, the daemon reopening it), the channel fails and the next frame opens the
/// port's new descriptor. What waits for the port with someone waiting on it (a frame sent
/// with `then`, an ``afterQueued(_:)`` action) is never dropped for room, and so bounded
/// in number instead (``maximumWaiting``) and in time: after ``maximumWait`` (the port
/// closed, or taking nothing) its waiter is told it was lost. It holds up no correction:
/// one behind it still goes stale. A port that stops taking what its channel was handed
/// has the channel closed after ``maximumWait``, which fails what waits in it (telling its
/// waiters); the next frame opens the port again.
///
/// ``enqueue(_:arrivedAt:)`` and ``close()`` run on ``eventLoop``; ``send(_:)`` and
/// ``portClosed()`` from anywhere.
public final class ReceiverWriter: @unchecked Sendable {
    public struct Counters: Sendable {
        public var written = 0
        public var droppedQueueFull = 0
        public var droppedStale = 0
        /// Frames lost in a write that failed (the port went away under them).
        public var failedWrites = 0
        /// Frames of a conversation whose turn was over by the time they reached the event
        /// loop (taken away at its deadline): not written.
        public var droppedTurnOver = 0
        /// Frames and actions refused because ``ReceiverWriter/maximumWaiting`` waited already.
        public var refusedWaiting = 0
        /// Frames and actions someone waited for, given up after ``ReceiverWriter/maximumWait``
        /// (the port closed, or taking nothing): their waiters were told they were lost.
        public var expiredWaiting = 0
        /// The time from a frame's arrival to its write, over the last frames written.
        public var latencies = LatencyWindow()

        public init() {}
    }

    /// How many frames sent with `then` and ``afterQueued(_:)`` actions may wait for the
    /// port at once. Each sender bounds its own (a conversation keeps a few frames in
    /// flight, a speed change waits for one), so more is a peer's flood: one past it is
    /// refused at once, its `then` or action called with `false`, and counted
    /// (``Counters/refusedWaiting``).
    public static let maximumWaiting = 16

    public let eventLoop: any EventLoop
    /// The queue's bound in bytes.
    let capacity: Int
    /// How long a frame may wait for the port before it is stale.
    let maximumAge: TimeAmount
    /// How long a frame or action someone waits for may wait for the port before the waiter
    /// is told it was lost.
    let maximumWait: TimeAmount
    /// A duplicate of the receiver's open descriptor (the writer owns it), `nil` while closed.
    private let openReceiver: @Sendable () -> Int32?
    private let box = NIOLockedValueBox(Counters())

    /// A frame and when it arrived; `then` runs once it was written (`true`) or lost.
    private typealias Entry = (frame: [UInt8], arrivedAt: NIODeadline, then: (@Sendable (Bool) -> Void)?)
    private var queue = CircularBuffer<Entry>()
    private var queuedBytes = 0
    /// Entries in ``queue`` with a `then`.
    private var waiting = 0
    private var channel: (any Channel)?
    private var opening = false
    /// The port closed while a channel was being opened on a duplicate taken before.
    private var closeWhenOpened = false
    /// When each batch handed to the channel and not yet written was handed, oldest first.
    private var handedAt = CircularBuffer<NIODeadline>()
    /// The pending look at whether the port took the oldest batch within ``maximumWait``.
    private var stallCheck: Scheduled<Void>?

    /// `openReceiver` gives a duplicate of the receiver's open descriptor (the writer owns
    /// it), `nil` while the port is closed.
    public init(
        eventLoop: any EventLoop, capacity: Int = 16 * 1024, maximumAge: TimeAmount = .seconds(5),
        maximumWait: TimeAmount = .seconds(30), openReceiver: @escaping @Sendable () -> Int32?
    ) {
        self.eventLoop = eventLoop
        self.capacity = capacity
        self.maximumAge = maximumAge
        self.maximumWait = maximumWait
        self.openReceiver = openReceiver
    }

    /// The writer of `port`: it writes through a duplicate of the reader's descriptor, and
    /// lets it go when the reader closes the port (``portClosed()``).
    public convenience init(eventLoop: any EventLoop, capacity: Int = 16 * 1024, port: SerialPort) {
        self.init(eventLoop: eventLoop, capacity: capacity, openReceiver: { port.duplicateOpenDescriptor() })
        port.whenClosed { [weak self] in self?.portClosed() }
    }

    /// The counters now.
    public var counters: Counters { box.withLockedValue { $0 } }

    private func update(_ change: (inout Counters) -> Void) { box.withLockedValue { change(&$0) } }

    /// Queues `frame`, which arrived at `arrivedAt`, and writes what the port takes.
    public func enqueue(_ frame: [UInt8], arrivedAt: NIODeadline) {
        enqueue((frame, arrivedAt, nil))
    }

    private func enqueue(_ entry: Entry) {
        eventLoop.assertInEventLoop()
        if let then = entry.then {
            guard waiting < Self.maximumWaiting else {
                update { $0.refusedWaiting += 1 }
                return then(false)
            }
            waiting += 1
            // Nothing else may arrive to wake the writer: the wait's own end does.
            eventLoop.scheduleTask(in: maximumWait + .milliseconds(1)) { [self] in pump() }
        }
        queue.append(entry)
        queuedBytes += entry.frame.count
        var dropped = 0
        // The oldest corrections go; a frame that someone waits for is never dropped.
        while queuedBytes > capacity, let index = queue.firstIndex(where: { $0.then == nil }), index != queue.index(before: queue.endIndex) {
            queuedBytes -= queue.remove(at: index).frame.count
            dropped += 1
        }
        if dropped > 0 { update { $0.droppedQueueFull += dropped } }
        pump()
    }

    /// Queues `frame` from any thread.
    public func send(_ frame: [UInt8]) {
        eventLoop.execute { [self] in enqueue(frame, arrivedAt: .now()) }
    }

    /// Queues `frame` from any thread if `stillWanted` holds when it reaches the event loop
    /// (where ``ReceiverControl``'s conversations take a turn away): a turn that ended
    /// between its holder's asking and the queueing writes nothing into the next one's
    /// (counted). A frame queued before the turn ended is written: a conversation keeps at
    /// most one in flight, waiting for its answer.
    public func send(_ frame: [UInt8], while stillWanted: @escaping @Sendable () -> Bool) {
        eventLoop.execute { [self] in
            guard stillWanted() else { return update { $0.droppedTurnOver += 1 } }
            enqueue(frame, arrivedAt: .now())
        }
    }

    /// Queues `frame` from any thread; `then` runs (on the event loop) once it was written
    /// (`true`), or with `false` when it was lost with the port, given up after
    /// ``maximumWait``, or refused because ``maximumWaiting`` waited already. It is never
    /// dropped for room.
    public func send(_ frame: [UInt8], then: @escaping @Sendable (Bool) -> Void) {
        eventLoop.execute { [self] in enqueue((frame, .now(), then)) }
    }

    /// Runs `action` (on the event loop) once every frame queued before it was written
    /// (`true`), or with `false` when they were lost with the port, it was given up after
    /// ``maximumWait``, or it was refused because ``maximumWaiting`` waited already: for
    /// what must follow a frame on the line, as a speed change follows the frame that asked
    /// for it.
    public func afterQueued(_ action: @escaping @Sendable (Bool) -> Void) {
        eventLoop.execute { [self] in enqueue(([], .now(), action)) }
    }

    /// Closes the port's channel; queued frames are dropped.
    public func close() {
        eventLoop.assertInEventLoop()
        for entry in queue { entry.then?(false) }
        queue.removeAll()
        queuedBytes = 0
        waiting = 0
        stallCheck?.cancel()
        stallCheck = nil
        channel?.close(promise: nil)
        channel = nil
    }

    /// The reader closed the port: the channel on the writer's duplicate is closed too (a
    /// batch it was handed is lost, its waiters told), so that nothing keeps the device
    /// open after its reader let go. Frames still queued are written when the next frame
    /// comes after the port opened again, or given up after their waits. From any thread.
    public func portClosed() {
        eventLoop.execute { [self] in
            if opening { closeWhenOpened = true }
            channel?.close(promise: nil)
        }
    }

    /// Hands the port as many frames as it takes now.
    fileprivate func pump() {
        dropStale()
        guard !queue.isEmpty else { return }
        guard let channel else { return open() }
        // One promise per batch, on its last frame: writes complete in order, so the
        // batch is written (or lost) when that one is. A frame someone waits for ends its
        // batch, with a promise of its own.
        while channel.isWritable, !queue.isEmpty {
            var arrivals: [NIODeadline] = []
            var last: Entry?
            while channel.isWritable, let next = queue.popFirst() {
                queuedBytes -= next.frame.count
                if next.then != nil { waiting -= 1 }
                if let last {
                    channel.write(ByteBuffer(bytes: last.frame), promise: nil)
                    arrivals.append(last.arrivedAt)
                }
                last = next
                if next.then != nil { break }
            }
            guard let last else { return }
            if last.then == nil { arrivals.append(last.arrivedAt) }
            let promise = eventLoop.makePromise(of: Void.self)
            handedAt.append(.now())
            promise.futureResult.whenComplete { [self, arrivals, then = last.then] result in
                // Writes complete in order: this batch is the oldest handed.
                _ = handedAt.popFirst()
                switch result {
                case .success:
                    let now = NIODeadline.now()
                    update { counters in
                        counters.written += arrivals.count
                        for arrival in arrivals { counters.latencies.record(now - arrival) }
                    }
                    then?(true)
                case .failure:
                    update { $0.failedWrites += arrivals.count }
                    then?(false)
                }
            }
            channel.writeAndFlush(ByteBuffer(bytes: last.frame), promise: promise)
            watchForStall()
        }
    }

    /// Looks, ``maximumWait`` after the oldest batch was handed to the channel, whether the
    /// port took it; a port that did not has its channel closed. One look pending at a time.
    private func watchForStall() {
        guard stallCheck == nil, let oldest = handedAt.first else { return }
        stallCheck = eventLoop.scheduleTask(deadline: oldest + maximumWait) { [self] in
            stallCheck = nil
            if let oldest = handedAt.first, NIODeadline.now() - oldest >= maximumWait {
                channel?.close(promise: nil)
            } else {
                watchForStall()
            }
        }
    }

    /// Drops the corrections that waited longer than ``maximumAge``, and gives up the frames
    /// and actions someone waits for that waited longer than ``maximumWait``, telling their
    /// waiters. The queue is in order of arrival, so both are among its oldest entries.
    private func dropStale() {
        let now = NIODeadline.now()
        var stale = 0
        var kept: [Entry] = []
        var expired: [@Sendable (Bool) -> Void] = []
        let shorter = min(maximumAge, maximumWait)
        while let first = queue.first, now - first.arrivedAt > shorter {
            let entry = queue.removeFirst()
            let age = now - entry.arrivedAt
            if let then = entry.then, age > maximumWait {
                waiting -= 1
                expired.append(then)
            } else if entry.then == nil, age > maximumAge {
                stale += 1
            } else {
                kept.append(entry)
                continue
            }
            queuedBytes -= entry.frame.count
        }
        for entry in kept.reversed() { queue.prepend(entry) }
        if stale > 0 || !expired.isEmpty {
            update {
                $0.droppedStale += stale
                $0.expiredWaiting += expired.count
            }
        }
        for then in expired { then(false) }
    }

    /// Opens a channel on the receiver's descriptor, if it is open.
    private func open() {
        guard !opening, let descriptor = openReceiver() else { return }
        opening = true
        NIOPipeBootstrap
            .takingOwnership(of: descriptor, as: .output, on: eventLoop) { [self] channel in
                // Little is buffered past the queue: the queue decides what is stale.
                try channel.syncOptions?.setOption(.writeBufferWaterMark, value: .init(low: 1024, high: 4096))
                try channel.pipeline.syncOperations.addHandler(PortHandler(writer: self))
            }
            .whenComplete { [self] result in
                opening = false
                let portClosedMeanwhile = closeWhenOpened
                closeWhenOpened = false
                guard case .success(let channel) = result else { return }
                if portClosedMeanwhile { return channel.close(promise: nil) }
                self.channel = channel
                pump()
            }
    }

    fileprivate func closed(_ closing: any Channel) {
        if channel === closing { channel = nil }
    }
}

/// The port's channel's events, to its writer.
private final class PortHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let writer: ReceiverWriter

    init(writer: ReceiverWriter) { self.writer = writer }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { writer.pump() }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        writer.closed(context.channel)
        context.fireChannelInactive()
    }
}

/// The latencies of the last frames written, for their median and 99th percentile.
public struct LatencyWindow: Sendable {
    private var samples: [Int64] = []

    public init() {}
    private var next = 0
    static let size = 1024

    mutating func record(_ latency: TimeAmount) {
        if samples.count < Self.size {
            samples.append(latency.nanoseconds)
        } else {
            samples[next] = latency.nanoseconds
            next = (next + 1) % Self.size
        }
    }

    /// The latency below which `fraction` of the samples lie; `nil` before any.
    public func percentile(_ fraction: Double) -> TimeAmount? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        let rank = max(0, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
        return .nanoseconds(sorted[min(sorted.count - 1, rank)])
    }
}
