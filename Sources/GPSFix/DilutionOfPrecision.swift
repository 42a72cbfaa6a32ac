#if canImport(Glibc)
import Glibc
#endif

/// Dilutions of precision computed from the geometry of the satellites used, for the ones
/// a receiver does not send (gpsd does the same, and never replaces a receiver's own).
///
/// Each used satellite with an elevation and azimuth gives a line-of-sight row
/// `(sin az cos el, cos az cos el, sin el, 1)`; with `H` the matrix of those rows, the
/// diagonal of `(HᵀH)⁻¹` gives the east, north, vertical and time variances: xdop and
/// ydop their square roots, hdop from both horizontal ones, pdop from the three spatial
/// ones, gdop from all four. Fewer than four such satellites, or a degenerate geometry,
/// give none.
public struct DilutionOfPrecision: Equatable {
    public var xdop: Double
    public var ydop: Double
    public var hdop: Double
    public var vdop: Double
    public var pdop: Double
    public var tdop: Double
    public var gdop: Double

    public init?(usedSatellitesOf satellites: [Satellite]) {
        // Row-major 4×4 matrices in inline storage: computing this allocates nothing.
        var product = InlineArray<16, Double>(repeating: 0)
        var count = 0
        let wholeDegrees = WholeDegrees.sinesAndCosines
        for satellite in satellites where satellite.used {
            guard let azimuth = satellite.azimuth, let elevation = satellite.elevation,
                (0...359).contains(azimuth), abs(elevation) <= 90
            else { continue }
            let (sinAzimuth, cosAzimuth) = Self.sineAndCosine(degrees: azimuth, wholeDegrees: wholeDegrees)
            let (sinElevation, cosElevation) = Self.sineAndCosine(degrees: elevation, wholeDegrees: wholeDegrees)
            let row: InlineArray<4, Double> = [sinAzimuth * cosElevation, cosAzimuth * cosElevation, sinElevation, 1]
            // HᵀH is symmetric: the upper triangle is summed, the lower copied after (the
            // same products, `a × b` being `b × a` exactly, added in the same order).
            for i in 0..<4 { for j in i..<4 { product[i * 4 + j] += row[i] * row[j] } }
            count += 1
        }
        for i in 1..<4 { for j in 0..<i { product[i * 4 + j] = product[j * 4 + i] } }
        guard count >= 4, let inverse = Self.inverted(product) else { return nil }
        let (east, north, up, time) = (inverse[0], inverse[5], inverse[10], inverse[15])
        guard east > 0, north > 0, up > 0, time > 0 else { return nil }
        xdop = east.squareRoot()
        ydop = north.squareRoot()
        hdop = (east + north).squareRoot()
        vdop = up.squareRoot()
        pdop = (east + north + up).squareRoot()
        tdop = time.squareRoot()
        gdop = (east + north + up + time).squareRoot()
    }

    /// The sine and cosine of an angle in degrees. Receivers send whole degrees, whose
    /// values come from a table computed once (the same values `sin` and `cos` give):
    /// a sky of 30 satellites costs 120 calls to libm otherwise, every cycle.
    static func sineAndCosine(degrees: Double) -> (sine: Double, cosine: Double) {
        sineAndCosine(degrees: degrees, wholeDegrees: WholeDegrees.sinesAndCosines)
    }

    /// ``sineAndCosine(degrees:)`` with the table fetched once by the caller, not per angle.
    @inline(__always)
    private static func sineAndCosine(
        degrees: Double, wholeDegrees: [(sine: Double, cosine: Double)]
    ) -> (sine: Double, cosine: Double) {
        let whole = degrees.rounded(.towardZero)
        if whole == degrees, whole >= -90, whole < 360 { return wholeDegrees[Int(whole) + 90] }
        let radians = degrees * (Double.pi / 180)
        return (sin(radians), cos(radians))
    }

    /// The inverse of a row-major 4×4 matrix by Gauss-Jordan elimination with partial
    /// pivoting; `nil` when it is singular.
    static func inverted(_ matrix: InlineArray<16, Double>) -> InlineArray<16, Double>? {
        var left = matrix
        var right = InlineArray<16, Double>(repeating: 0)
        for index in 0..<4 { right[index * 5] = 1 }
        for column in 0..<4 {
            var pivot = column
            for row in (column + 1)..<4 where abs(left[row * 4 + column]) > abs(left[pivot * 4 + column]) { pivot = row }
            guard abs(left[pivot * 4 + column]) > 1e-12 else { return nil }
            if pivot != column {
                for j in 0..<4 {
                    left.swapAt(column * 4 + j, pivot * 4 + j)
                    right.swapAt(column * 4 + j, pivot * 4 + j)
                }
            }
            let scale = left[column * 4 + column]
            for j in 0..<4 {
                left[column * 4 + j] /= scale
                right[column * 4 + j] /= scale
            }
            for row in 0..<4 where row != column {
                let factor = left[row * 4 + column]
                guard factor != 0 else { continue }
                for j in 0..<4 {
                    left[row * 4 + j] -= factor * left[column * 4 + j]
                    right[row * 4 + j] -= factor * right[column * 4 + j]
                }
            }
        }
        return right
    }
}

/// The dilutions of the last geometry computed, kept by an assembler from cycle to
/// cycle: satellites move a degree in minutes, so most cycles' used satellites stand
/// where they stood in the last, and their dilutions are the ones computed then (the
/// same positions in the same order give the same bits). Its memory is reused: once
/// warm, it allocates nothing.
struct DilutionMemo {
    /// The azimuth and elevation of each used satellite, in order, when last computed.
    private var positions: [(azimuth: Double?, elevation: Double?)] = []
    private var dilutions: DilutionOfPrecision?

    /// The dilutions of the geometry of `satellites`' used ones, computed only when it
    /// differs from the last.
    mutating func dilutions(usedSatellitesOf satellites: [Satellite]) -> DilutionOfPrecision? {
        guard !isLastGeometry(of: satellites) else { return dilutions }
        positions.removeAll(keepingCapacity: true)
        for satellite in satellites where satellite.used {
            positions.append((satellite.azimuth, satellite.elevation))
        }
        dilutions = DilutionOfPrecision(usedSatellitesOf: satellites)
        return dilutions
    }

    /// Whether the used satellites of `satellites` stand where those last computed stood.
    private func isLastGeometry(of satellites: [Satellite]) -> Bool {
        var index = 0
        for satellite in satellites where satellite.used {
            guard index < positions.count, positions[index].azimuth == satellite.azimuth,
                positions[index].elevation == satellite.elevation
            else { return false }
            index += 1
        }
        return index == positions.count
    }
}

/// Sines and cosines of the whole degrees from -90 to 359, index 0 for -90.
private enum WholeDegrees {
    static let sinesAndCosines = (-90..<360).map { degrees in
        let radians = Double(degrees) * (Double.pi / 180)
        return (sine: sin(radians), cosine: cos(radians))
    }
}
