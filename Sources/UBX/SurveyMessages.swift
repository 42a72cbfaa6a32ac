import ReceiverFraming

/// How far a base or timing receiver's survey-in has come, as NAV-SVIN and TIM-SVIN report
/// it: the mean of its positions so far, how good that mean is, and whether it is done.
public struct SurveyProgress: Sendable, Hashable {
    /// Seconds the survey has run.
    public var duration: UInt32
    /// The mean position, ECEF, in 0.1 mm (exact: whole centimetres and the high-precision
    /// remainder, where the message has one).
    public var meanX: Int64
    public var meanY: Int64
    public var meanZ: Int64
    /// The mean position's accuracy (one standard deviation), metres.
    public var accuracy: Double
    /// Positions averaged.
    public var observations: UInt32
    /// Whether the survey met its minimum duration and accuracy limit: the position is
    /// fixed and the receiver is a base (or keeps time) from it.
    public var isValid: Bool
    /// Whether the survey is still running.
    public var isActive: Bool

    public init(
        duration: UInt32, meanX: Int64, meanY: Int64, meanZ: Int64, accuracy: Double, observations: UInt32, isValid: Bool,
        isActive: Bool
    ) {
        self.duration = duration
        self.meanX = meanX
        self.meanY = meanY
        self.meanZ = meanZ
        self.accuracy = accuracy
        self.observations = observations
        self.isValid = isValid
        self.isActive = isActive
    }
}

/// UBX-NAV-SVIN (generation 8 base receivers and generation 9 on): the survey-in's progress
/// with a high-precision mean and its accuracy in 0.1 mm.
public struct NavSVIN: Sendable, Hashable {
    public static let message: UInt16 = 0x013B

    public var iTOW: UInt32
    public var progress: SurveyProgress

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 40), p.u8(0) == 0 else { return nil }
        iTOW = p.u32(4)
        // Whole centimetres (at most 2^31) times 100 plus -99...99 fits an Int64 with room.
        func mean(_ offset: Int, _ fine: Int) -> Int64 { Int64(p.i32(offset)) * 100 + Int64(p.i8(fine)) }
        progress = SurveyProgress(
            duration: p.u32(8), meanX: mean(12, 24), meanY: mean(16, 25), meanZ: mean(20, 26),
            accuracy: Double(p.u32(28)) * 1e-4, observations: p.u32(32), isValid: p.u8(36) != 0, isActive: p.u8(37) != 0)
    }
}

/// UBX-TIM-SVIN (timing receivers: NEO-M8T, LEA-6T): the survey-in's progress, its mean in
/// centimetres and the variance of that mean in mm².
public struct TimSVIN: Sendable, Hashable {
    public static let message: UInt16 = 0x0D04

    public var progress: SurveyProgress

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 28) else { return nil }
        progress = SurveyProgress(
            duration: p.u32(0), meanX: Int64(p.i32(4)) * 100, meanY: Int64(p.i32(8)) * 100, meanZ: Int64(p.i32(12)) * 100,
            accuracy: Double(p.u32(16)).squareRoot() * 1e-3, observations: p.u32(20), isValid: p.u8(24) != 0,
            isActive: p.u8(25) != 0)
    }
}
