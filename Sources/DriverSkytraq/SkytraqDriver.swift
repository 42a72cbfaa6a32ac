import GPSFix
import ReceiverFraming

/// The Skytraq binary protocol of Venus receivers: gpsd's `Skytraq` driver.
public enum SkytraqDriver: ReceiverDriver {
    /// gpsd's name for it.
    public static let name = "Skytraq"
    public static var frames: any FrameRule.Type { SkytraqFrameRule.self }

    public static func makeAssembler(_ context: AssemblyContext) -> any DriverAssembler {
        SkytraqAssembler(context)
    }
}
