import CLibGPS

#if canImport(Glibc)
import Glibc
#endif

/// The three functions of libgps a gpsd:// device uses, from the library loaded the first
/// time one is opened (``shared``), not when the daemon starts: libgps brings D-Bus and
/// systemd's libraries with it, resident memory a daemon reading serial receivers would
/// carry for nothing.
struct LibGPS: @unchecked Sendable {
    typealias Open = @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutablePointer<gps_data_t>?) -> Int32
    typealias Stream = @convention(c) (UnsafeMutablePointer<gps_data_t>?, UInt32, UnsafeMutableRawPointer?) -> Int32
    typealias Close = @convention(c) (UnsafeMutablePointer<gps_data_t>?) -> Int32

    let open: Open
    let stream: Stream
    let close: Close

    /// The library, or why it cannot be loaded (the message names the file missing).
    static let shared: Result<LibGPS, DeviceError> = Result { () throws(DeviceError) -> LibGPS in
        guard let library = dlopen(CLIBGPS_SONAME, RTLD_NOW | RTLD_LOCAL) else {
            throw .refused(path: "gpsd://", message: "reading from gpsd needs \(CLIBGPS_SONAME) (Debian: libgps): \(lastError())")
        }
        func function<T>(_ name: String, as type: T.Type) throws(DeviceError) -> T {
            guard let address = dlsym(library, name) else {
                throw .refused(path: "gpsd://", message: "\(CLIBGPS_SONAME) has no \(name): \(lastError())")
            }
            return unsafeBitCast(address, to: type)
        }
        return LibGPS(
            open: try function("gps_open", as: Open.self), stream: try function("gps_stream", as: Stream.self),
            close: try function("gps_close", as: Close.self))
    }

    private static func lastError() -> String { dlerror().map { String(cString: $0) } ?? "unknown error" }
}
