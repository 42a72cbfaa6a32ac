@testable import GPSFix
import Testing

/// The geoid separation: EGM2008 every 5°, in centimetres, interpolated bilinearly as gpsd does.
@Suite("Geoid: EGM2008 every 5°, bilinear within the cell")
struct GeoidTests {
    @Test(
        "points of gpsd's logs: gpsd's separation there (EGM2008 too), to the half millimetre",
        arguments: [
            (53.563_256_267, -113.439_544_853, -18.9544), (45.218_541_146, 5.807_177_490, 48.6478),
            (44.068_809_596, -121.314_309_171, -22.1549), (46.404_595_600, -117.020_730_200, -15.351),
            (47.129_092_700, 15.212_043_200, 44.866), (48.740_960_500, 9.311_732_800, 46.091),
            (-34.906_226_600, 138.608_119_900, -1.662),
        ] as [(Double, Double, Double)])
    func points(latitude: Double, longitude: Double, gpsd: Double) {
        #expect(abs(Geoid.separation(latitude: latitude, longitude: longitude) - gpsd) < 0.0005)
    }

    @Test("nodes: NGA's EGM2008 height there, to the centimetre")
    func nodes() {
        #expect(Geoid.separation(latitude: 0, longitude: 0) == 17.23)
        #expect(Geoid.separation(latitude: 50, longitude: -115) == -13.37)
        #expect(Geoid.separation(latitude: 35, longitude: 135) == 36.79)
    }

    @Test("the poles: one height at every longitude, and approached continuously")
    func poles() {
        for longitude in stride(from: -180.0, through: 180, by: 7.5) {
            #expect(Geoid.separation(latitude: 90, longitude: longitude) == 14.90)
            #expect(Geoid.separation(latitude: -90, longitude: longitude) == -30.15)
            #expect(abs(Geoid.separation(latitude: 89.999_99, longitude: longitude) - 14.90) < 0.0005)
            #expect(abs(Geoid.separation(latitude: -89.999_99, longitude: longitude) + 30.15) < 0.0005)
        }
    }

    @Test("the antimeridian: 180°E is 180°W, continuous across it; longitudes wrap")
    func antimeridian() {
        for latitude in [-60, -12.5, 0, 37.3, 61, 88] {
            let east = Geoid.separation(latitude: latitude, longitude: 180)
            #expect(Geoid.separation(latitude: latitude, longitude: -180) == east)
            #expect(abs(Geoid.separation(latitude: latitude, longitude: 179.999_999_9) - east) < 0.0005)
            #expect(abs(Geoid.separation(latitude: latitude, longitude: -179.999_999_9) - east) < 0.0005)
            #expect(Geoid.separation(latitude: latitude, longitude: 540) == east)
            #expect(Geoid.separation(latitude: latitude, longitude: -540) == east)
        }
        #expect(abs(Geoid.separation(latitude: -12.5, longitude: 180) - 42.275) < 0.0005)
    }

    @Test("not a place: 0 for a latitude beyond a pole or a coordinate that is not a number")
    func outside() {
        #expect(Geoid.separation(latitude: .nan, longitude: 10) == 0)
        #expect(Geoid.separation(latitude: 10, longitude: .infinity) == 0)
        #expect(Geoid.separation(latitude: 90.5, longitude: 10) == 0)
        #expect(Geoid.separation(latitude: -91, longitude: 10) == 0)
        #expect(Geoid.separation(latitude: 10, longitude: 1e300).isFinite)
    }
}
