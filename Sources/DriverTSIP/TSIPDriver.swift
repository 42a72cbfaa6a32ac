import GPSFix
import ReceiverFraming

/// The Trimble TSIP driver: classic TSIP (Lassen iQ, Resolution SMT 360 and SMTx,
/// ResSMT360) and TSIPv1 (RES 720), which shares its envelope.
public enum TSIPDriver: ReceiverDriver {
    /// gpsd's name for it.
    public static let name = "Trimble TSIP"
    public static let frames: any FrameRule.Type = TSIPFrameRule.self
    /// Trimble's receivers speak TSIP with odd parity: the Lassen iQ at 9600 8O1, the
    /// Resolution SMT 360 and SMTx at 115200 8O1 (the RES 720's TSIPv1 is 8N1).
    public static let serialLines = [SerialLine(bps: 9600, parity: "O"), SerialLine(bps: 115_200, parity: "O")]

    public static func makeAssembler(_ context: AssemblyContext) -> any DriverAssembler {
        TSIPAssembler(context)
    }
}
