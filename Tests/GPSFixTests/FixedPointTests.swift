import GPSFix
import Testing

/// The one number formatter every output writes with: total over `Double`.
@Suite("FixedPoint: every Double written as a fixed-point number, none trapping")
struct FixedPointTests {
    static let greatest =
        "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234"
        + "321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332"
        + "123348274797826204144723168738177180919299881250404026184124858368"

    @Test(
        "values of a fix: rounded half away from zero to the decimals asked, no sign on a zero",
        arguments: [
            (52.123_456_789, 7, "52.1234568"), (-4.5, 0, "-5"), (4.5, 0, "5"), (0.04, 1, "0.0"), (-0.04, 1, "0.0"),
            (-0.05, 1, "-0.1"), (359.96, 1, "360.0"), (0, 3, "0.000"), (-0.0, 2, "0.00"), (12.0, 9, "12.000000000"),
            (1_764_158_400.25, 3, "1764158400.250"),
        ] as [(Double, Int, String)])
    func ordinary(value: Double, decimals: Int, expected: String) {
        #expect(FixedPoint.string(value, decimals: decimals) == expected)
    }

    @Test(
        "values past 2⁶³ after scaling: every digit of the double, then its decimals",
        arguments: [
            (Double("99999999999999999")!, 3, "100000000000000000.000"), (1e10, 9, "10000000000.000000000"),
            (12_345_678_901.234_5, 9, "12345678901.234500885"), (-4_611_686_018_427_387_904, 9, "-4611686018427387904.000000000"),
            (1e19, 0, "10000000000000000000"),
            (1e300, 1,
             "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832"
                + "883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038"
                + "967640880074652742780142494579258788820056842838115669472196386865459400540160.0"),
        ] as [(Double, Int, String)])
    func large(value: Double, decimals: Int, expected: String) {
        #expect(FixedPoint.string(value, decimals: decimals) == expected)
    }

    @Test("not numbers: NaN is 0, infinities are the greatest finite magnitude, signed")
    func notNumbers() {
        #expect(FixedPoint.string(.nan, decimals: 2) == "0.00")
        #expect(FixedPoint.string(-.nan, decimals: 0) == "0")
        #expect(FixedPoint.string(.infinity, decimals: 1) == Self.greatest + ".0")
        #expect(FixedPoint.string(-.infinity, decimals: 0) == "-" + Self.greatest)
        #expect(FixedPoint.string(-.greatestFiniteMagnitude, decimals: 9) == "-" + Self.greatest + ".000000000")
    }

    @Test("never more bytes than it says, for any bit pattern")
    func bounded() {
        var generator = SystemRandomNumberGenerator()
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 400)
        defer { buffer.deallocate() }
        for _ in 0..<20_000 {
            let value = Double(bitPattern: generator.next())
            let decimals = Int.random(in: 0...9, using: &generator)
            let count = FixedPoint.write(value, decimals: decimals, to: buffer)
            #expect(count <= FixedPoint.maximumCount(for: value, decimals: decimals))
            let text = String(decoding: UnsafeBufferPointer(start: buffer, count: count), as: UTF8.self)
            #expect(text.allSatisfy { $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-") }, "\(value): \(text)")
        }
    }
}
