import GPSFix
import ReceiverFraming

/// SiRF binary: SiRF II receivers (the BU-303 and its kin) and SiRF I receivers with
/// u-blox's firmware, which adds MID 98. gpsd's DEVICE calls them `"SiRF"`.
public enum SiRFDriver: ReceiverDriver {
    public static let name = "SiRF"
    public static var frames: any FrameRule.Type { SiRFFrameRule.self }

    public static func makeAssembler(_ context: AssemblyContext) -> any DriverAssembler {
        SiRFAssembler(rolloverRule: context.rolloverRule)
    }
}
