import NMEA
import ReceiverFraming
import UBX

/// What one device has delivered since the provider started: the framer's counts
/// (sentences, refused lines by reason, bytes), the assembler's (cycles, sentences it
/// could not decode or does not read), and how often the device had to be reopened.
public struct DeviceCounters: Hashable, Sendable {
    public var framing = FramerStatistics()
    public var assembly = FixAssembler.Statistics()
    /// The binary protocols' frames (UBX, RTCM 3 and the drivers'), accepted and refused, by rule.
    public var binaryFraming = BinaryFramingStatistics()
    public var ubxAssembly = UBXAssembler.Statistics()
    /// Each driver's assembly counts (the protocols beside NMEA and UBX), by the name of
    /// its frame rule, as ``binaryFraming`` names its frames.
    public var driverAssembly: [String: EpochReports.Statistics] = [:]
    /// Times the device was reopened after being lost.
    public var reconnects = 0
    /// Every byte read from the device, of every protocol (NMEA text, UBX and RTCM 3
    /// frames, and what no frame took): all of it goes through the receiver framer first,
    /// which hands only the text between binary frames on to the NMEA framer (whose
    /// ``FramerStatistics/bytes`` count that text alone).
    public var bytes: Int { binaryFraming.bytes }
    /// Fixes whose time was kept from the clock: dated before GPSFix existed, or a
    /// week-number era after (see ``ReceiverTimeSampler``).
    public var distrustedTimes = 0
    /// Fixes whose time came before the last one sampled, kept from the clock (see
    /// ``ReceiverTimeSampler``).
    public var timesBehind = 0
    /// Fixes whose time came further ahead of the last one sampled than the read clock
    /// went on, kept from the clock (see ``ReceiverTimeSampler``).
    public var timesAhead = 0
    /// The receiver's survey-in as it last reported it, for a base or timing receiver;
    /// `nil` for one that never reported one.
    public var survey: SurveyProgress?

    public init() {}

    /// Values left out of fixes and sky views for lying outside their ranges, of every
    /// protocol the receiver sent.
    public var valuesOutOfRange: Int {
        driverAssembly.values.reduce(assembly.valuesOutOfRange + ubxAssembly.valuesOutOfRange) { $0 + $1.valuesOutOfRange }
    }

    /// The drivers' part of ``summary``: frames, refusals and epochs of each protocol that sent any.
    private var driverSummary: String {
        binaryFraming.protocols.compactMap { name, counts in
            guard let assembly = driverAssembly[name], counts.frames + counts.refused > 0 else { return nil }
            return ", \(name) frames \(counts.frames), refused \(counts.refused), epochs \(assembly.epochs)"
        }.joined()
    }

    /// One line for a log: `sentences 1200, rejected 3 (bad-checksum 2, too-long 1), ...`.
    public var summary: String {
        let reasons = FramerRejection.allCases.filter { framing[$0] > 0 }.map { "\($0) \(framing[$0])" }
        let rejected = reasons.isEmpty ? "" : " (\(reasons.joined(separator: ", ")))"
        let ubx = binaryFraming[UBXFrameRule.self], rtcm3 = binaryFraming[RTCM3FrameRule.self]
        return "sentences \(framing.sentences), rejected \(framing.rejected)\(rejected), "
            + "undecodable \(assembly.decodingErrors), unknown \(assembly.unknownSentences), "
            + "cycles \(assembly.cycles), reconnects \(reconnects), bytes \(bytes)"
            + (ubx.frames + ubx.refused > 0 ? ", UBX frames \(ubx.frames), refused \(ubx.refused), epochs \(ubxAssembly.epochs)" : "")
            + (rtcm3.frames + rtcm3.refused > 0 ? ", RTCM 3 frames \(rtcm3.frames), refused \(rtcm3.refused)" : "")
            + driverSummary
            + (distrustedTimes > 0 ? ", times kept from the clock (dated before 2026, or from August 2045) \(distrustedTimes)" : "")
            + (timesBehind > 0 ? ", times behind the last sampled \(timesBehind)" : "")
            + (timesAhead > 0 ? ", times ahead of the last sampled by more than the time since \(timesAhead)" : "")
            + (valuesOutOfRange > 0 ? ", values out of range \(valuesOutOfRange)" : "")
    }
}
