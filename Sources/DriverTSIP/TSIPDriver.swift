import GPSFix
import ReceiverFraming

/// The Trimble TSIP driver: classic TSIP (Lassen iQ, Resolution SMT 360 and SMTx,
/// ResSMT360) and TSIPv1 (RES 720), which shares its envelope.
public enum TSIPDriver: ReceiverDriver {
    /// gpsd's name for it.
    public static let name = "Trimble TSIP"
    public static let frames: any FrameRule.Type = TSIPFrameRule.self

    public static func makeAssembler(_ context: AssemblyContext) -> any DriverAssembler {
        TSIPAssembler(context)
    }
}
