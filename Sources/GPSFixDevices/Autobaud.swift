import GPSFix
import NMEA
import ReceiverDrivers
import ReceiverFraming

/// Finds a receiver's serial line by listening at each common speed in turn, then at the
/// line settings the drivers add (TSIP's odd parity), until valid, checked frames arrive:
/// NMEA sentences, or the frames of a binary protocol (UBX, RTCM 3 from a base station
/// set to send only that, or any driver's).
///
/// At a wrong speed or parity a UART delivers noise, which never passes the framer's
/// checks (random bytes pass NMEA's one time in 256 and UBX's one in 65,536, and two frames
/// are required). The bytes read at the right setting are returned too, so nothing the
/// receiver sent is lost.
public enum Autobaud {
    /// What was found: the line, and the bytes read while listening at it.
    public struct Result: Equatable, Sendable {
        public var line: SerialLine
        public var bytes: [UInt8]
    }

    /// The settings tried, in order: 8N1 at each common speed, then the drivers' own.
    public static let lines: [SerialLine] = {
        var lines = SerialSettings.commonSpeeds.map { SerialLine(bps: $0) }
        for driver in ReceiverDrivers.all {
            for line in driver.serialLines where !lines.contains(line) { lines.append(line) }
        }
        return lines
    }()

    /// Tries `lines` in order. `listen(line, enough)` must read with that setting until
    /// `enough(bytesSoFar)` says stop or its time window passes, and return what it read.
    public static func detect<Failure: Error>(
        lines: [SerialLine] = Autobaud.lines, requiredFrames: Int = 2,
        listen: (_ line: SerialLine, _ enough: ([UInt8]) -> Bool) throws(Failure) -> [UInt8]
    ) throws(Failure) -> Result? {
        for line in lines {
            let bytes = try listen(line) { validFrames(in: $0) >= requiredFrames }
            if validFrames(in: bytes) >= requiredFrames { return Result(line: line, bytes: bytes) }
        }
        return nil
    }

    /// How many checksummed sentences of standard length and binary frames of any
    /// protocol `bytes` holds.
    static func validFrames(in bytes: [UInt8]) -> Int {
        let framer = ReceiverFramer(
            nmea: .init(maximumLength: 128, checksumPolicy: .required),
            rules: ReceiverFramer.standardRules() + ReceiverDrivers.all.map { ReceiverFramer.Rule($0.frames) })
        bytes.withUnsafeBytes { framer.feed($0) { _ in } }
        return framer.nmea.statistics.sentences + framer.binaryStatistics.frames
    }
}
