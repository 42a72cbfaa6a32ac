import NMEA
import ReceiverFraming

/// Finds a receiver's serial speed by listening at each common speed in turn until valid,
/// checksummed frames arrive: NMEA sentences, or UBX frames from a u-blox receiver set to
/// UBX only.
///
/// At a wrong speed a UART delivers noise, which never passes the framer's checksums
/// (random bytes pass NMEA's one time in 256 and UBX's one in 65,536, and two frames are
/// required). The bytes read at the right speed are returned too, so nothing the receiver
/// sent is lost.
public enum Autobaud {
    /// What was found: the speed, and the bytes read while listening at it.
    public struct Result: Equatable, Sendable {
        public var speed: Int
        public var bytes: [UInt8]
    }

    /// Tries `speeds` in order. `listen(speed, enough)` must read at that speed until
    /// `enough(bytesSoFar)` says stop or its time window passes, and return what it read.
    public static func detect<Failure: Error>(
        speeds: [Int] = SerialSettings.commonSpeeds, requiredSentences: Int = 2,
        listen: (_ speed: Int, _ enough: ([UInt8]) -> Bool) throws(Failure) -> [UInt8]
    ) throws(Failure) -> Result? {
        for speed in speeds {
            let bytes = try listen(speed) { validFrames(in: $0) >= requiredSentences }
            if validFrames(in: bytes) >= requiredSentences { return Result(speed: speed, bytes: bytes) }
        }
        return nil
    }

    /// How many checksummed sentences of standard length and UBX frames `bytes` holds.
    static func validFrames(in bytes: [UInt8]) -> Int {
        let framer = ReceiverFramer(nmea: .init(maximumLength: 128, checksumPolicy: .required))
        bytes.withUnsafeBytes { framer.feed($0) { _ in } }
        return framer.nmea.statistics.sentences + framer.binaryStatistics[UBXFrameRule.self].frames
    }
}
