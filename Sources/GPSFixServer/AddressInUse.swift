#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
import ProcessTable

/// A TCP address the daemon cannot listen on because another program holds it: the error
/// names the address and, when `/proc` tells, who holds it (gpsd, or systemd for gpsd's
/// socket unit, which installing gpsd enables).
public struct AddressInUse: Error, CustomStringConvertible {
    /// `127.0.0.1:2947`, `[::1]:2947`.
    public let address: String
    /// The processes listening on its port; empty when `/proc` does not say.
    public let holders: [ProcessTable.Process]

    public var description: String {
        var text = "cannot listen on \(address): the address is in use"
        if let holder = holders.first {
            text += holder.id == 1 || holder.name == "systemd"
                ? " by systemd, for a socket unit (gpsd.socket, if gpsd is installed: systemctl disable --now gpsd.socket gpsd.service)"
                : " by \(holder.name) (pid \(holder.id))"
        }
        return text + "; stop it, or choose another port"
    }
}

extension GPSFixServer {
    /// Binds `bootstrap` on TCP `host`:`port`; an address in use is an ``AddressInUse``.
    func bind(_ bootstrap: ServerBootstrap, host: String, port: Int) async throws -> any Channel {
        do {
            return try await bootstrap.bind(host: host, port: port).get()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            throw AddressInUse(address: address, holders: ProcessTable().listeners(ofTCPPort: port))
        }
    }
}
