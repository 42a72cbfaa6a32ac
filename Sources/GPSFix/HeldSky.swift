/// The dilutions a receiver sent last with its satellites, and when.
///
/// Many receivers send GSA and GSV only every few cycles (SiRF: every fifth). As gpsd
/// does, the last values stand until the receiver replaces them, so every cycle has a
/// SKY with its DOPs; unlike gpsd, they stand for at most ``maximumAge`` seconds (or as
/// many cycles when the receiver gives no time), so a receiver that stops sending them
/// does not leave a stale view up for good. The DOPs are forgotten when a cycle opens
/// with a sentence that carries none (``forgetDilutions()``), as gpsd clears its own.
struct HeldSky {
    static let maximumAge = 30.0

    var hdop: Double?
    var vdop: Double?
    var pdop: Double?
    var tdop: Double?
    private var time: GPSTime?
    private var cycle: Int?

    /// Takes what `values`, a cycle with satellite news, said.
    mutating func update(from values: Cycle, time: GPSTime?, cycle: Int) {
        hdop = values.hdop ?? hdop
        vdop = values.vdop ?? vdop
        pdop = values.pdop ?? pdop
        tdop = values.tdop ?? tdop
        self.time = time
        self.cycle = cycle
    }

    /// Forgets the DOPs, keeping the time the satellites were renewed: a cycle opened by
    /// a sentence without a DOP (an RMC) does not carry the last ones, as gpsd clears its
    /// DOPs at a cycle's first sentence unless that sentence set one.
    mutating func forgetDilutions() {
        hdop = nil
        vdop = nil
        pdop = nil
        tdop = nil
    }

    /// Whether the held values are recent enough to report with a cycle at `time`.
    /// Inlined: a call from the assembler would copy the held sky to lend it.
    @inline(__always)
    func isFresh(at time: GPSTime?, cycle: Int) -> Bool {
        guard let heldCycle = self.cycle else { return false }
        if let time, let heldTime = self.time {
            let age = time.secondsSince1970 - heldTime.secondsSince1970
            return age >= 0 && age <= Self.maximumAge
        }
        return Double(cycle - heldCycle) <= Self.maximumAge
    }
}
