import DriverCASIC
import DriverSiRF
import DriverSkytraq
import DriverTSIP
import GPSFix

/// The receiver drivers GPSFix reads besides NMEA 0183 and u-blox UBX (which the
/// ``ReceiverStreamDecoder`` reads itself): everything that reads a receiver's stream
/// (the daemon's devices, `gpsfix decode`, the replayer) passes this list on.
public enum ReceiverDrivers {
    /// Every driver, one per protocol. A frame that two protocols could claim goes to the
    /// one listed first.
    public static let all: [any ReceiverDriver.Type] = [
        CASICDriver.self,
        SkytraqDriver.self,
        SiRFDriver.self,
        TSIPDriver.self,
    ]
}
