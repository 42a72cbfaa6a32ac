#if canImport(Glibc)
import Glibc
#endif

/// Distances and bearings on the WGS-84 ellipsoid, for deriving motion from positions.
///
/// Vincenty's inverse formula, as gpsd's `earth_distance` computes it: on the ellipsoid
/// rather than a sphere, because a spherical distance is off by up to half a percent,
/// which is more than a speed's last printed digit at walking pace.
public enum Geodesy {
    /// WGS-84 semi-major axis (metres) and flattening.
    static let semiMajorAxis = 6_378_137.0
    static let flattening = 1 / 298.257_223_563

    /// The direction of a vector given by its east and north components, in degrees
    /// from true north, 0 to 360.
    public static func bearing(east: Double, north: Double) -> Double {
        let degrees = atan2(east, north) / (Double.pi / 180)
        return degrees < 0 ? degrees + 360 : degrees
    }

    /// The distance in metres and the initial bearing in degrees (0 to 360, from true
    /// north) from the first point to the second, both in degrees; `nil` for nearly
    /// antipodal points, where the iteration does not converge.
    public static func inverse(from start: (latitude: Double, longitude: Double), to end: (latitude: Double, longitude: Double))
        -> (distance: Double, bearing: Double)?
    {
        let a = semiMajorAxis, f = flattening, b = (1 - f) * a
        let radians = Double.pi / 180
        let u1 = atan((1 - f) * tan(start.latitude * radians))
        let u2 = atan((1 - f) * tan(end.latitude * radians))
        let l = (end.longitude - start.longitude) * radians
        let (sinU1, cosU1, sinU2, cosU2) = (sin(u1), cos(u1), sin(u2), cos(u2))
        var lambda = l
        for _ in 0..<200 {
            let (sinLambda, cosLambda) = (sin(lambda), cos(lambda))
            let sinSigma = ((cosU2 * sinLambda) * (cosU2 * sinLambda)
                + (cosU1 * sinU2 - sinU1 * cosU2 * cosLambda) * (cosU1 * sinU2 - sinU1 * cosU2 * cosLambda)).squareRoot()
            if sinSigma == 0 { return (0, 0) }  // the same point
            let cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda
            let sigma = atan2(sinSigma, cosSigma)
            let sinAlpha = cosU1 * cosU2 * sinLambda / sinSigma
            let cosSquaredAlpha = 1 - sinAlpha * sinAlpha
            // On the equator cos²α is 0 and the term vanishes.
            let cos2SigmaM = cosSquaredAlpha == 0 ? 0 : cosSigma - 2 * sinU1 * sinU2 / cosSquaredAlpha
            let c = f / 16 * cosSquaredAlpha * (4 + f * (4 - 3 * cosSquaredAlpha))
            let previous = lambda
            lambda = l + (1 - c) * f * sinAlpha
                * (sigma + c * sinSigma * (cos2SigmaM + c * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
            guard abs(lambda - previous) < 1e-12 else { continue }
            let uSquared = cosSquaredAlpha * (a * a - b * b) / (b * b)
            let bigA = 1 + uSquared / 16384 * (4096 + uSquared * (-768 + uSquared * (320 - 175 * uSquared)))
            let bigB = uSquared / 1024 * (256 + uSquared * (-128 + uSquared * (74 - 47 * uSquared)))
            let deltaSigma = bigB * sinSigma
                * (cos2SigmaM + bigB / 4
                    * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)
                        - bigB / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
            let distance = b * bigA * (sigma - deltaSigma)
            return (distance, bearing(east: cosU2 * sin(lambda), north: cosU1 * sinU2 - sinU1 * cosU2 * cos(lambda)))
        }
        return nil
    }
}

extension Geodesy {
    /// Latitude and longitude (degrees) and height above the ellipsoid (metres) of an
    /// ECEF point, for receivers that give only ECEF (u-blox NAV-SOL): Bowring's method
    /// with one refinement, well under a millimetre anywhere near the Earth.
    public static func geodetic(x: Double, y: Double, z: Double) -> (latitude: Double, longitude: Double, height: Double) {
        let a = semiMajorAxis
        let b = a * (1 - flattening)
        let e2 = flattening * (2 - flattening)
        let ep2 = (a * a - b * b) / (b * b)
        let p = (x * x + y * y).squareRoot()
        var theta = atan2(z * a, p * b)
        var latitude = atan2(z + ep2 * b * pow(sin(theta), 3), p - e2 * a * pow(cos(theta), 3))
        // One more step from the first estimate.
        theta = atan2((1 - flattening) * sin(latitude), cos(latitude))
        latitude = atan2(z + ep2 * b * pow(sin(theta), 3), p - e2 * a * pow(cos(theta), 3))
        let n = a / (1 - e2 * sin(latitude) * sin(latitude)).squareRoot()
        let height = abs(cos(latitude)) > 1e-9 ? p / cos(latitude) - n : abs(z) - b
        let degrees = 180 / Double.pi
        return (latitude * degrees, atan2(y, x) * degrees, height)
    }

    /// An ECEF velocity as north, east and down at a latitude and longitude (degrees).
    public static func localVelocity(x: Double, y: Double, z: Double, latitude: Double, longitude: Double) -> NEDVelocity {
        let phi = latitude * Double.pi / 180
        let lambda = longitude * Double.pi / 180
        let north = -sin(phi) * cos(lambda) * x - sin(phi) * sin(lambda) * y + cos(phi) * z
        let east = -sin(lambda) * x + cos(lambda) * y
        let up = cos(phi) * cos(lambda) * x + cos(phi) * sin(lambda) * y + sin(phi) * z
        return NEDVelocity(north: north, east: east, down: -up)
    }
}
