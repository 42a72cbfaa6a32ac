import GPSFix
import ReceiverFraming

/// The CASIC driver: Zhongkewei's binary protocol (AT6558 and AT6558R chips, in Quectel's
/// L76K among others), read beside the NMEA those receivers send too.
public enum CASICDriver: ReceiverDriver {
    /// gpsd's name for it.
    public static let name = "CASIC"
    public static let frames: any FrameRule.Type = CASICFrameRule.self

    public static func makeAssembler(_ context: AssemblyContext) -> any DriverAssembler {
        CASICAssembler(context)
    }
}
