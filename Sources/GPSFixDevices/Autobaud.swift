import NMEA

/// Finds a receiver's serial speed by listening at each common speed in turn until valid,
/// checksummed sentences arrive.
///
/// At a wrong speed a UART delivers noise, which never passes the framer's checksum
/// (random bytes pass it one time in 256, and two sentences are required). The bytes read
/// at the right speed are returned too, so nothing the receiver sent is lost.
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
            let bytes = try listen(speed) { validSentences(in: $0) >= requiredSentences }
            if validSentences(in: bytes) >= requiredSentences { return Result(speed: speed, bytes: bytes) }
        }
        return nil
    }

    /// How many checksummed sentences of standard length `bytes` holds.
    static func validSentences(in bytes: [UInt8]) -> Int {
        let framer = NMEAFramer(configuration: .init(maximumLength: 128, checksumPolicy: .required))
        bytes.withUnsafeBytes { framer.feed($0) { _ in } }
        return framer.statistics.sentences
    }
}
