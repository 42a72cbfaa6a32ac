import GPSFix
import GPSFixDevices
import TestSupport
import Testing

/// A port that finds its speed is opened again, to find it anew, when what it reads has
/// made no frame for a whole silence timeout: a receiver back from a power cycle at another
/// speed sends noise. A stray burst of noise is not that.
@Suite("Finding a lost speed again", .timeLimit(.minutes(1)))
struct SpeedSearchTests {
    /// A line that finds its speed, scripted: each opening reads what the test sends
    /// while it is open, and counts what it has handed over.
    final class ScriptedLine: ByteSource {
        let name = "/dev/scripted"
        var findsSpeed: Bool { true }
        var line: SerialLine? { SerialLine(bps: 115_200) }
        private let state = Locked((openings: [AsyncStream<ByteChunk>.Continuation](), handed: 0))

        var openings: Int { state.withLock { $0.openings.count } }
        var handed: Int { state.withLock { $0.handed } }

        func chunks() -> ByteChunks {
            let (stream, continuation) = AsyncStream.makeStream(of: ByteChunk.self)
            state.withLock { $0.openings.append(continuation) }
            return ByteChunks { [state] handler in
                for await chunk in stream {
                    handler(chunk)
                    state.withLock { $0.handed += 1 }
                }
            }
        }

        /// Sends `bytes` to the opening now open, and waits until it has handed them over.
        func send(_ bytes: [UInt8]) throws {
            let target = handed + 1
            state.withLock { _ = $0.openings.last?.yield(ByteChunk(bytes)) }
            try waitUntil("the chunk handed over", within: 10) { handed >= target }
        }
    }

    static let sentences = Array((
        "$GPGGA,120000.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*69\r\n"
            + "$GPRMC,120000.00,A,4807.038,N,01131.000,E,0.0,0.0,231126,,,A*62\r\n"
    ).utf8)
    /// What a UART at the wrong speed reads: bytes that frame nothing.
    static let noise: [UInt8] = Array(repeating: 0xF0, count: 40)

    @Test("noise for a whole timeout reopens the port, saying why; a burst, a pause as long, and a burst do not")
    func noiseReopens() async throws {
        let clock = ManualClock()
        let line = ScriptedLine()
        let provider = NMEALocationProvider(source: line, clock: clock, silenceTimeout: .seconds(3))
        var updates = provider.updateStream().makeAsyncIterator()
        try waitUntil("the first opening") { line.openings == 1 }
        try line.send(Self.sentences)

        try line.send(Self.noise)
        clock.advance(by: .seconds(4))
        try line.send(Self.noise)
        for _ in 0..<2 {
            clock.advance(by: .seconds(1))
            try line.send(Self.noise)
        }
        #expect(line.openings == 1, "noise for 2 s after a pause of 4 s")
        clock.advance(by: .seconds(1))
        try line.send(Self.noise)

        var reason: String?
        while reason == nil, let update = await updates.next() {
            if case .device(let event) = update, case .lost(let why) = event.kind { reason = why }
        }
        #expect(reason == "what /dev/scripted sends at 115200 bps has made no frames for a while: finding its speed again")
        // After the reopening's backoff, on the provider's clock.
        try waitUntil("the port opened again") {
            clock.advance(by: .milliseconds(100))
            return line.openings == 2
        }
    }
}
