import CLibGPS

#if canImport(Glibc)
import Glibc
#endif

/// The functions of libgps a gpsd:// device uses, from the library loaded the first
/// time one is opened (``shared``), not when the daemon starts: libgps brings D-Bus and
/// systemd's libraries with it, resident memory a daemon reading serial receivers would
/// carry for nothing.
struct LibGPS: @unchecked Sendable {
    typealias Open = @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutablePointer<gps_data_t>?) -> Int32
    typealias Stream = @convention(c) (UnsafeMutablePointer<gps_data_t>?, UInt32, UnsafeMutableRawPointer?) -> Int32
    typealias Close = @convention(c) (UnsafeMutablePointer<gps_data_t>?) -> Int32
    typealias ErrorText = @convention(c) (Int32) -> UnsafePointer<CChar>?

    let open: Open
    let stream: Stream
    let close: Close
    /// `gps_errstr`: what libgps's own error codes (negative) mean.
    let errorText: ErrorText

    /// The files of libgps this binary can use, newest first: on a 64-bit system gpsd
    /// 3.25's (Debian 13) and 3.22's (Debian 12), then that of the gps.h it was built with;
    /// on a 32-bit system only the last. See `CLibGPS/shim.h` for why.
    static let fileNames: [String] = {
        #if _pointerBitWidth(_64)
        let either = ["libgps.so.30", "libgps.so.28"]
        #else
        let either: [String] = []
        #endif
        return either.contains(CLIBGPS_SONAME) ? either : either + [CLIBGPS_SONAME]
    }()

    /// The library, or why it cannot be loaded (the message names the files looked for).
    static let shared: Result<LibGPS, DeviceError> = Result { () throws(DeviceError) -> LibGPS in
        var errors: [String] = []
        for fileName in fileNames {
            guard let library = dlopen(fileName, RTLD_NOW | RTLD_LOCAL) else {
                errors.append(lastError())
                continue
            }
            func function<T>(_ name: String, as type: T.Type) throws(DeviceError) -> T {
                guard let address = dlsym(library, name) else {
                    throw .refused(path: "gpsd://", message: "\(fileName) has no \(name): \(lastError())")
                }
                return unsafeBitCast(address, to: type)
            }
            return LibGPS(
                open: try function("gps_open", as: Open.self), stream: try function("gps_stream", as: Stream.self),
                close: try function("gps_close", as: Close.self), errorText: try function("gps_errstr", as: ErrorText.self))
        }
        throw .refused(
            path: "gpsd://",
            message: "reading from gpsd needs libgps (Debian: libgps30t64 or libgps28): \(errors.joined(separator: "; "))")
    }

    /// What `code`, one of libgps's own (negative) error codes, means.
    func text(ofError code: Int32) -> String {
        errorText(code).map { String(cString: $0) } ?? "error \(code)"
    }

    private static func lastError() -> String { dlerror().map { String(cString: $0) } ?? "unknown error" }
}
